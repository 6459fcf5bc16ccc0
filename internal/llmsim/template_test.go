package llmsim

import (
	"fmt"
	"testing"
)

// A scenario can script texts that read like a run on any question (what
// @examples/sim_three_agents does): {question} in an answer, a vote reason
// with {label}, and a presentation around the {answer} presented — read
// back whole from massgen's Go-quoted prompt, quotes and line breaks kept.
func TestTemplatesFillTheQuestionTheLabelAndTheAnswer(t *testing.T) {
	f := start(t, scenario(t, `
models:
  m:
    answer: 'Draft {n} of {model} on "{question}".'
    vote_reason: "{label} is clearest."
    final: "{answer} (presented by {model})"
`))
	ctx := testCtx(t)
	res, err := f.client.Chat.Completions.New(ctx, params("m", "<ORIGINAL MESSAGE> What is 2+2? <END OF ORIGINAL MESSAGE>", newAnswerTool()))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Choices[0].Message.ToolCalls[0].Function.Arguments; got != `{"content":"Draft 1 of m on \"What is 2+2?\"."}` {
		t.Errorf("answer arguments = %s", got)
	}
	res, err = f.client.Chat.Completions.New(ctx, params("m", "task", newAnswerTool(), voteTool("agent2")))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Choices[0].Message.ToolCalls[0].Function.Arguments; got != `{"agent_id":"agent2","reason":"agent2 is clearest."}` {
		t.Errorf("vote arguments = %s", got)
	}
	answer := "Draft 1 on \"x\".\nSecond line."
	prompt := fmt.Sprintf("<ORIGINAL MESSAGE> x <END OF ORIGINAL MESSAGE>\n\nAll answers provided during coordination:\nm (YOUR ANSWER): %q\n\nBased on the coordination above…", answer)
	res, err = f.client.Chat.Completions.New(ctx, params("m", prompt))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Choices[0].Message.Content, answer+" (presented by m)"; got != want {
		t.Errorf("presentation = %q, want %q", got, want)
	}
}
