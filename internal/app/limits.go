package app

import "github.com/massgen/massgen/internal/tool"

// MaxQuestion is the largest question a run takes (from the command line,
// massgen serve, massgen mcp, the Go and Python APIs): 1 MiB, about 250k
// tokens, more than most models' whole context once the agents' answers
// are added to it. Each byte of a question costs a run a few hundred
// (BenchmarkQuestionSize: a 10 MiB question allocated 3.4 GB with two
// simulated agents and peaked at 1.58 GB), because it is in every
// request, every turn's event and every rewrite of status.json. Material
// larger than that belongs in a file the agents read with their tools.
const MaxQuestion = 1 << 20

// checkQuestion refuses a question past MaxQuestion.
func checkQuestion(q string) error {
	if len(q) > MaxQuestion {
		return usageErr("the question is %s, more than the %s a question may be: put the material in a file, give the agents "+
			"a workspace (cwd) with it as a context path (--cwd-context, context_paths), and ask about it", tool.Size(len(q)), tool.Size(MaxQuestion))
	}
	return nil
}
