package coord

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"text/scanner"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

// TestTranscripts replays every testdata/*.script through a Machine and
// compares the command log with the .golden file beside it. Every input and
// command also goes through its JSON form on the way (the replay log's
// encoding), so a transcript proves the codec as well. A script line is one
// input, or a config line before the first input:
//
//	config agents=a,b,c max=5 novelty=balanced policy=inject first=false hold=true budget=2 fairness=2|default|off
//	       presentation=always restarts=1 direct=true tools=true timeout=10m grace=30s
//	       round=10m later=5m round_grace=2m   (per-round timeouts: first, later rounds, grace)
//	       gate=2 gated=a,b                     (checklist_gated: voting_threshold, the gated agents)
//	       criteria=primary,standard,stretch    (the criteria's categories, E1…)
//	       report=true                          (the diagnostic report gate)
//	       injections=2 defer=true defer_before_checklist=true   (mid-stream peer updates)
//	start
//	answer AGENT TURN "content"          (seen epoch is irrelevant for answers)
//	vote AGENT TURN SEEN LABEL "reason"
//	stop AGENT TURN SEEN STATUS "summary"   (decomposition mode: mode=decomposition presenter=ID)
//	checklist AGENT TURN SEEN "scores"   (submit_checklist; scores as JSON)
//	          [report "path" CHARS "problem"]   (what the tool found of the diagnostic report)
//	draft AGENT TURN SEEN "arguments"    (draft_approach; its arguments as JSON)
//	fail AGENT TURN "error" [circuit] [failure=KIND,STATUS[,retryable]]
//	                                     (circuit: the failure came from an open breaker;
//	                                     failure=: the Failure as data, e.g. bad_request,404)
//	timeout                              (the run deadline passed)
//	budget "reason"                      (max_cost_usd / max_total_tokens spent)
//	presented "text" [calls=N]           (the presentation or direct call ended)
//	presentation-failed "error"
//	evaluated submit | evaluated restart "reason" "instructions"
//	grace                                (the presentation grace expired)
//	round AGENT TURN soft|hard|cutoff    (a stage of the turn's round timer passed)
//	criteria "primary: text" …           (generated criteria, before start)
//	criteria-for AGENT "standard: text" … (an agent's own criteria: decomposition's per-subtask ones)
//	interrupt
//
// The transcripts' agents start eagerly (hold=true selects the default,
// FirstAnswersHold), may give any number of answers unless max= says, and
// play without fairness unless fairness= (a lead cap, or "default") says.
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
	cfg := Config{Agents: []string{"a", "b", "c"}, Settings: Settings{FirstAnswers: FirstAnswersEager, MaxAnswers: Unlimited,
		FairnessLeadCap: FairnessOff}}
	var m *Machine
	for n, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		f := fields(line)
		fmt.Fprintf(&out, "> %s\n", line)
		if f[0] == "config" {
			configure(t, &cfg, f[1:], n+1)
			continue
		}
		if m == nil {
			m = New(cfg)
		}
		in := parseInput(t, f, n+1)
		// massgen replay prints a recorded run's inputs in this syntax.
		if got := DescribeInput(in); got != line {
			t.Errorf("line %d: %q is described as %q", n+1, line, got)
		}
		for _, c := range m.Step(roundTrip(t, in, MarshalInput, UnmarshalInput)) {
			out.WriteString("  " + DescribeCommand(roundTrip(t, c, MarshalCommand, UnmarshalCommand)) + "\n")
		}
		fmt.Fprintf(&out, "  = %s\n", m.DescribeState())
	}
	return out.String()
}

func configure(t *testing.T, cfg *Config, kvs []string, line int) {
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "agents":
			cfg.Agents = strings.Split(v, ",")
		case "max":
			cfg.MaxAnswers = atoi(t, v)
		case "novelty":
			cfg.Novelty, err = ParseNovelty(v)
		case "policy":
			cfg.RestartPolicy, err = ParseRestartPolicy(v)
		case "first":
			if v == "false" {
				cfg.FirstAnswers = FirstAnswersInterruptible
			}
		case "hold":
			if v == "true" {
				cfg.FirstAnswers = FirstAnswersHold
			}
		case "budget":
			cfg.FailureBudget = atoi(t, v)
		case "fairness":
			switch v {
			case "off":
				cfg.FairnessLeadCap = FairnessOff
			case "default":
				cfg.FairnessLeadCap = 0
			default:
				cfg.FairnessLeadCap = atoi(t, v)
			}
		case "presentation":
			cfg.Presentation = map[string]Presentation{"auto": PresentAuto, "always": PresentAlways, "never": PresentNever}[v]
		case "restarts":
			cfg.MaxRestarts = atoi(t, v)
		case "direct":
			cfg.Direct = v == "true"
		case "tools":
			cfg.ClientTools = v == "true"
		case "timeout":
			cfg.Timeout, err = time.ParseDuration(v)
		case "grace":
			cfg.PresentationGrace, err = time.ParseDuration(v)
		case "gate":
			if cfg.Checklist == nil {
				cfg.Checklist = &Checklist{}
			}
			cfg.Checklist.Threshold = atoi(t, v)
		case "injections":
			cfg.MaxInjections = atoi(t, v)
		case "defer":
			cfg.DeferUpdates = v == "true"
		case "defer_before_checklist":
			cfg.DeferBeforeChecklist = v == "true"
		case "criteria":
			if cfg.Checklist == nil {
				cfg.Checklist = &Checklist{}
			}
			for i, c := range strings.Split(v, ",") {
				cfg.Checklist.Criteria = append(cfg.Checklist.Criteria, Criterion{Text: fmt.Sprintf("criterion %d", i+1), Category: c})
			}
		case "report":
			if cfg.Checklist == nil {
				cfg.Checklist = &Checklist{}
			}
			cfg.Checklist.Report = v == "true"
		case "gated":
			if cfg.Checklist == nil {
				cfg.Checklist = &Checklist{}
			}
			cfg.Checklist.Agents = strings.Split(v, ",")
		case "mode":
			cfg.Decomposition = v == "decomposition"
		case "presenter":
			cfg.Presenter = v
		case "round":
			cfg.FirstRoundTimeout, err = time.ParseDuration(v)
		case "later":
			cfg.LaterRoundTimeout, err = time.ParseDuration(v)
		case "global":
			cfg.MaxAnswersGlobal = atoi(t, v)
		case "round_grace":
			cfg.RoundGrace, err = time.ParseDuration(v)
		default:
			t.Fatalf("line %d: unknown config key %q", line, k)
		}
		if err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
	}
}

func parseInput(t *testing.T, f []string, line int) Input {
	arg := func(i int) string {
		if i >= len(f) {
			t.Fatalf("line %d: %s needs more arguments", line, f[0])
		}
		return f[i]
	}
	switch f[0] {
	case "start":
		return Start{}
	case "answer":
		return Proposed{Agent: arg(1), Turn: TurnID(atoi(t, arg(2))), Action: Action{Kind: ActNewAnswer, Content: arg(3)}}
	case "stop":
		return Proposed{Agent: arg(1), Turn: TurnID(atoi(t, arg(2))), Seen: atoi(t, arg(3)), Action: Action{Kind: ActStop, Label: arg(4), Reason: arg(5)}}
	case "vote":
		return Proposed{Agent: arg(1), Turn: TurnID(atoi(t, arg(2))), Seen: atoi(t, arg(3)), Action: Action{Kind: ActVote, Label: arg(4), Reason: arg(5)}}
	case "checklist":
		act := Action{Kind: ActChecklist, Content: arg(4)}
		if len(f) > 5 && f[5] == "report" {
			act.Report = &ReportFacts{Path: arg(6), Chars: atoi(t, arg(7)), Problem: arg(8)}
		}
		return Proposed{Agent: arg(1), Turn: TurnID(atoi(t, arg(2))), Seen: atoi(t, arg(3)), Action: act}
	case "draft":
		return Proposed{Agent: arg(1), Turn: TurnID(atoi(t, arg(2))), Seen: atoi(t, arg(3)), Action: Action{Kind: ActDraft, Content: arg(4)}}
	case "fail":
		in := TurnFailed{Agent: arg(1), Turn: TurnID(atoi(t, arg(2))), Err: arg(3)}
		for _, opt := range f[4:] {
			switch kind, ok := strings.CutPrefix(opt, "failure="); {
			case opt == "circuit":
				in.CircuitOpen = true
			case ok:
				parts := strings.Split(kind, ",")
				if len(parts) < 2 {
					t.Fatalf("line %d: failure=KIND,STATUS[,retryable], got %q", line, opt)
				}
				in.Failure = &Failure{Kind: FailureKind(parts[0]), Agent: in.Agent, Status: atoi(t, parts[1]), Message: in.Err,
					Retryable: len(parts) > 2 && parts[2] == "retryable"}
			default:
				t.Fatalf("line %d: unknown fail option %q", line, opt)
			}
		}
		return in
	case "timeout":
		return DeadlinePassed{}
	case "budget":
		return BudgetSpent{Reason: arg(1)}
	case "presented":
		p := Presented{Text: arg(1)}
		if len(f) > 2 {
			p.ToolCalls = atoi(t, strings.TrimPrefix(f[2], "calls="))
		}
		return p
	case "presentation-failed":
		return Presented{Err: arg(1)}
	case "evaluated":
		if arg(1) == "restart" {
			return Evaluated{Restart: true, Reason: arg(2), Instructions: arg(3)}
		}
		return Evaluated{}
	case "grace":
		return GraceExpired{}
	case "criteria", "criteria-for":
		var cs CriteriaSet
		args := f[1:]
		if f[0] == "criteria-for" {
			cs.Agent, args = arg(1), f[2:]
		}
		for _, c := range args {
			cat, text, _ := strings.Cut(c, ": ")
			cs.Criteria = append(cs.Criteria, Criterion{Text: text, Category: cat})
		}
		return cs
	case "round":
		return RoundTimeUp{Agent: arg(1), Turn: TurnID(atoi(t, arg(2))), Stage: RoundStage(arg(3))}
	case "interrupt":
		return Interrupted{Reason: "context canceled"}
	}
	t.Fatalf("line %d: unknown input %q", line, f[0])
	return nil
}

// roundTrip encodes v and decodes it again, failing the test when the
// result differs: what the machine sees in a transcript is exactly what a
// replay log would give it.
func roundTrip[T any](t *testing.T, v T, enc func(T) ([]byte, error), dec func([]byte) (T, error)) T {
	t.Helper()
	b, err := enc(v)
	if err != nil {
		t.Fatalf("encoding %#v: %v", v, err)
	}
	got, err := dec(b)
	if err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	if diff := cmp.Diff(v, got, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("%s does not decode to what was encoded (-want +got):\n%s", b, diff)
	}
	return got
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
