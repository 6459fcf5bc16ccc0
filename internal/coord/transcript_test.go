package coord

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/scanner"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

// TestTranscripts replays every testdata/*.script through a Machine and
// compares the command log with the .golden file beside it. A script line is
// one input:
//
//	config agents=a,b,c max=5 novelty=balanced policy=inject first=false budget=2 hold=true
//	start
//	answer AGENT TURN "content"          (seen epoch is irrelevant for answers)
//	vote AGENT TURN SEEN LABEL "reason"
//	fail AGENT TURN "error"
//	timeout
//	stop REASON                          (budget spent and the like)
//
// Run `go test ./internal/coord -update` to rewrite the golden files after a
// deliberate change, then read the diff.
func TestTranscripts(t *testing.T) {
	scripts, _ := filepath.Glob("testdata/*.script")
	if len(scripts) == 0 {
		t.Fatal("no transcripts in testdata/")
	}
	for _, path := range scripts {
		name := strings.TrimSuffix(filepath.Base(path), ".script")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := replay(t, string(src))
			golden := strings.TrimSuffix(path, ".script") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("transcript %s changed (-want +got):\n%s", name, diff)
			}
		})
	}
}

func replay(t *testing.T, src string) string {
	var out strings.Builder
	cfg := Config{Agents: []string{"a", "b", "c"}, IndependentFirstAnswer: true}
	var m *Machine
	for n, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		f := fields(line)
		fmt.Fprintf(&out, "> %s\n", line)
		if f[0] != "config" && m == nil {
			m = New(cfg)
		}
		var cmds []Command
		switch f[0] {
		case "config":
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "agents":
					cfg.Agents = strings.Split(v, ",")
				case "max":
					cfg.MaxAnswers = atoi(t, v)
				case "novelty":
					cfg.Novelty = v
				case "policy":
					cfg.Inject = v == "inject"
				case "first":
					cfg.IndependentFirstAnswer = v == "true"
				case "hold":
					cfg.Hold = v == "true"
				case "budget":
					cfg.FailureBudget = atoi(t, v)
				default:
					t.Fatalf("line %d: unknown config key %q", n+1, k)
				}
			}
			continue
		case "start":
			cmds = m.Start()
		case "answer":
			v, c := m.Submit(f[1], TurnID(atoi(t, f[2])), m.Epoch(), Action{Kind: ActNewAnswer, Content: f[3]})
			writeVerdict(&out, v)
			cmds = c
		case "vote":
			v, c := m.Submit(f[1], TurnID(atoi(t, f[2])), atoi(t, f[3]), Action{Kind: ActVote, Label: f[4], Reason: f[5]})
			writeVerdict(&out, v)
			cmds = c
		case "fail":
			cmds = m.TurnFailed(f[1], TurnID(atoi(t, f[2])), f[3])
		case "timeout":
			cmds = m.Timeout()
		case "stop":
			cmds = m.Stop(f[1], false)
		default:
			t.Fatalf("line %d: unknown input %q", n+1, f[0])
		}
		for _, c := range cmds {
			out.WriteString("  " + describe(c) + "\n")
		}
		fmt.Fprintf(&out, "  = epoch %d; %s\n", m.Epoch(), statuses(m))
	}
	return out.String()
}

func writeVerdict(out *strings.Builder, v Verdict) {
	s := "  verdict " + v.Outcome.String()
	if v.Label != "" {
		s += " label=" + v.Label
	}
	if v.Target != "" {
		s += " target=" + v.Target
	}
	if v.Message != "" {
		s += fmt.Sprintf(" msg=%q", v.Message)
	}
	out.WriteString(s + "\n")
}

func describe(c Command) string {
	switch c := c.(type) {
	case StartTurn:
		return fmt.Sprintf("start %s turn=%d epoch=%d answers=%s", c.Agent, c.Turn, c.Epoch, answerList(c.Answers))
	case CancelTurn:
		return fmt.Sprintf("cancel %s turn=%d (%s)", c.Agent, c.Turn, c.Reason)
	case Inject:
		return fmt.Sprintf("inject %s turn=%d epoch=%d answers=%s", c.Agent, c.Turn, c.Epoch, answerList(c.Answers))
	case AgentFailed:
		return fmt.Sprintf("agent-failed %s after %d failures: %s", c.Agent, c.Failures, c.Err)
	case Present:
		var ids []string
		for id := range c.Tally {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		var tally []string
		for _, id := range ids {
			tally = append(tally, fmt.Sprintf("%s:%d", id, c.Tally[id]))
		}
		return fmt.Sprintf("present winner=%s (%s) answer=%q tally={%s}", c.Winner, c.How, c.Answer.Content, strings.Join(tally, " "))
	case Fail:
		return fmt.Sprintf("fail timeout=%v: %s", c.Timeout, c.Reason)
	}
	return fmt.Sprintf("%#v", c)
}

func answerList(as []Answer) string {
	var s []string
	for _, a := range as {
		s = append(s, fmt.Sprintf("%s=%s.%d", a.Label, a.Agent, a.Rev))
	}
	return "[" + strings.Join(s, " ") + "]"
}

func statuses(m *Machine) string {
	var s []string
	for _, a := range m.agents {
		s = append(s, a.id+":"+a.status.String())
	}
	return strings.Join(s, " ")
}

func fields(line string) []string {
	var sc scanner.Scanner
	sc.Init(strings.NewReader(line))
	sc.Mode = scanner.ScanIdents | scanner.ScanInts | scanner.ScanStrings
	sc.IsIdentRune = func(ch rune, i int) bool {
		return ch == '_' || ch == '=' || ch == ',' || ch == '-' || ch == '.' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9'
	}
	var out []string
	for tok := sc.Scan(); tok != scanner.EOF; tok = sc.Scan() {
		s := sc.TokenText()
		if tok == scanner.String {
			s, _ = strconv.Unquote(s)
		}
		out = append(out, s)
	}
	return out
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}
