package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/orchestrator"
)

// StreamVersion is the version of the --stream-events line format. It
// changes only when a line's meaning changes; new fields and new event
// types may appear within a version, and readers ignore what they do not
// know.
const StreamVersion = 1

// streamLine is one line of --stream-events output. One flat struct, so
// every line has the same field order and a reader needs no per-type
// schema; docs/events.md says which type fills which field.
type streamLine struct {
	V    int    `json:"v"`
	Seq  uint64 `json:"seq"`
	Type string `json:"type"`
	Time string `json:"time"`

	Agent    string            `json:"agent,omitempty"`
	Question string            `json:"question,omitempty"`
	Agents   []event.AgentInfo `json:"agents,omitempty"`
	Shown    []string          `json:"shown,omitempty"`
	Text     string            `json:"text,omitempty"`

	Label        string `json:"label,omitempty"`
	AnonLabel    string `json:"anon_label,omitempty"`
	Target       string `json:"target,omitempty"`
	TargetLabel  string `json:"target_label,omitempty"`
	TargetAnswer string `json:"target_answer,omitempty"`
	Reason       string `json:"reason,omitempty"`
	Where        string `json:"where,omitempty"` // warning: the config position it is about

	Tool       string   `json:"tool,omitempty"`
	Args       string   `json:"args,omitempty"`
	Result     string   `json:"result,omitempty"`
	IsError    bool     `json:"is_error,omitempty"`
	DurationMS *float64 `json:"duration_ms,omitempty"`
	Progress   *float64 `json:"progress,omitempty"` // tool_progress: how far, of total
	Total      float64  `json:"total,omitempty"`    // tool_progress: 0 or absent when unknown

	InputTokens  int64    `json:"input_tokens,omitempty"`
	OutputTokens int64    `json:"output_tokens,omitempty"`
	CostUSD      *float64 `json:"cost_usd,omitempty"`

	Error *streamError `json:"error,omitempty"`

	// winner and finished.
	Winner string         `json:"winner,omitempty"`
	How    string         `json:"how,omitempty"`
	Votes  map[string]int `json:"votes,omitempty"`

	// finished only.
	Status       string               `json:"status,omitempty"`
	FinalAnswer  *string              `json:"final_answer,omitempty"`
	Usage        map[string]llm.Usage `json:"usage,omitempty"`
	TotalUsage   *llm.Usage           `json:"total_usage,omitempty"`
	Fallback     string               `json:"fallback,omitempty"`
	LogDir       string               `json:"log_dir,omitempty"`
	AnswerFile   string               `json:"answer_file,omitempty"`
	ExitCode     *int                 `json:"exit_code,omitempty"`
	GraceExpired bool                 `json:"grace_expired,omitempty"`
	// SessionID is the session the run was a turn of (massgen
	// --session-id ID, or massgen.run(session_id=ID), asks a follow-up);
	// absent with --no-logs, which keeps no session.
	SessionID string `json:"session_id,omitempty"`
}

// streamError is an error as a reader can act on it: which agent, which
// provider and model, which HTTP status (0 when none), and what kind of
// failure — config, provider, timeout, interrupted, failed.
type streamError struct {
	Message  string `json:"message"`
	Kind     string `json:"kind,omitempty"`
	Agent    string `json:"agent,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	Status   int    `json:"status,omitempty"`
	// Failure is the failure's kind as data (coord.FailureKind: auth,
	// quota, rate_limit, stall, timeout, circuit_open, bad_request,
	// provider, tool, protocol, cancelled, other); Retryable and
	// RetryAfterS say whether and when trying again may help.
	Failure     coord.FailureKind `json:"failure,omitempty"`
	Retryable   bool              `json:"retryable,omitempty"`
	RetryAfterS float64           `json:"retry_after_s,omitempty"`
}

// streamTypes maps the run's event types to the stream's. The stream has
// its own names so that the log format and this contract can move apart;
// run_finished is absent: the stream ends with its own "finished" line,
// written once the run's result (usage, cost, answer file) is known.
var streamTypes = map[event.Type]string{
	event.TypeRunStarted:     "run_started",
	event.TypeTurnStarted:    "agent_started",
	event.TypeTextDelta:      "agent_delta",
	event.TypeReasoningDelta: "reasoning_delta",
	event.TypeToolCalled:     "tool_call",
	event.TypeToolProgress:   "tool_progress",
	event.TypeAnswerAccepted: "answer",
	event.TypeVoteAccepted:   "vote",
	event.TypeActionRejected: "rejected",
	event.TypeTurnRestarted:  "restart",
	event.TypeTurnFailed:     "agent_error",
	event.TypeTurnEnded:      "turn_ended",
	event.TypeAgentFailed:    "agent_failed",
	event.TypeTimeout:        "timeout",
	event.TypeBudgetExceeded: "budget_exceeded",
	event.TypeWinnerSelected: "winner",
	event.TypeFinalStarted:   "final_started",
	event.TypeFinalDelta:     "final_delta",
	event.TypeFinalAnswer:    "final_answer",
	event.TypePostEvaluation: "post_evaluation",
	event.TypeRunRestarted:   "orchestration_restart",
	event.TypeWarning:        "warning",
}

// eventStream writes --stream-events lines. Its own sequence numbers
// count lines, so a reader sees 1, 2, 3… even when the run's streamed-text
// events were skipped for a slow reader.
type eventStream struct {
	mu     sync.Mutex
	w      io.Writer
	now    func() time.Time
	seq    uint64
	logDir string
	// session is the id of the session the run is a turn of ("" without).
	session string
	// schema is the line format: 1 (the default) renames types and
	// flattens fields for this stream; event.SchemaVersion writes each
	// event as its record, the one schema of the logs and the server.
	schema int
}

func (s *eventStream) write(l streamLine) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	l.V, l.Seq = StreamVersion, s.seq
	if l.Time == "" {
		l.Time = s.now().UTC().Format(time.RFC3339Nano)
	}
	b, err := json.Marshal(l)
	if err != nil { // cannot happen: every field marshals
		b = []byte(fmt.Sprintf(`{"v":%d,"seq":%d,"type":"invalid","error":{"message":%q}}`, StreamVersion, s.seq, err))
	}
	s.w.Write(append(b, '\n')) // a reader that went away cannot be told
}

// line turns one run event into its stream line; ok is false for events
// the stream leaves out.
func (s *eventStream) line(e event.Event) (streamLine, bool) {
	typ, ok := streamTypes[e.Type()]
	if !ok {
		return streamLine{}, false
	}
	r := event.ToRecord(e)
	l := streamLine{Type: typ, Time: r.Time.UTC().Format(time.RFC3339Nano), Agent: r.Agent}
	switch e := e.(type) {
	case event.RunStarted:
		l.Question, l.Agents, l.LogDir = e.Question, e.Team, s.logDir
	case event.TurnStarted:
		l.Shown, l.Reason = r.Labels, e.Reason
	case event.TextDelta:
		l.Text, l.Tool = r.Text, e.Tool
	case event.ReasoningDelta, event.FinalDelta:
		l.Text = r.Text
	case event.ToolCalled:
		ms := r.DurationMS
		l.Tool, l.Args, l.Result, l.IsError, l.DurationMS = e.Tool, e.Args, e.Result, e.IsError, &ms
	case event.ToolProgress:
		l.Tool, l.Progress, l.Total, l.Text = e.Tool, &e.Progress, e.Total, e.Message
	case event.AnswerAccepted:
		l.Text, l.Label, l.AnonLabel = e.Content, e.Label, e.AnonLabel
	case event.VoteAccepted:
		l.Target, l.TargetLabel, l.TargetAnswer, l.Reason = e.Target, e.TargetLabel, e.TargetAnswer, e.Reason
	case event.ActionRejected:
		l.Reason = e.Reason
	case event.TurnRestarted:
		l.Target, l.Reason = e.Cause, e.Reason
	case event.TurnFailed:
		l.Error = agentError(e.Agent, e.Err, "provider", e.Failure)
	case event.AgentFailed:
		l.Reason, l.Error = e.Reason, agentError(e.Agent, e.Err, "failed", e.Failure)
	case event.Timeout:
		l.Reason = e.Reason
		if e.Err != "" {
			l.Error = agentError(e.Agent, e.Err, "timeout", e.Failure)
		}
	case event.TurnEnded:
		l.InputTokens, l.OutputTokens, l.CostUSD = e.InputTokens, e.OutputTokens, &e.CostUSD
	case event.BudgetExceeded:
		l.Reason = e.Reason
	case event.Warning:
		l.Text, l.Where = e.Text, e.Where
	case event.WinnerSelected:
		l.Agent, l.Winner, l.How, l.Votes, l.Label = "", e.Agent, e.How, e.Votes, e.Label
	case event.FinalAnswer:
		l.Text, l.Reason = e.Text, e.Reason
	case event.PostEvaluation:
		l.Text, l.Reason = e.Verdict, e.Reason
	case event.RunRestarted:
		l.Text, l.Reason = e.Instructions, e.Reason
	}
	return l, true
}

// agentError is an agent's error as a reader can act on it, from the
// failure the event carries as data. kind keeps the stream's version-1
// meaning: "provider" for a failure that came from the provider (it
// answered with a status, refused, stalled, or its breaker is open),
// otherwise what the event says ("failed", "timeout").
func agentError(agent, msg, kind string, f *coord.Failure) *streamError {
	e := &streamError{Message: msg, Kind: kind, Agent: agent}
	if f == nil {
		return e
	}
	e.Provider, e.Model, e.Status = f.Provider, f.Model, f.Status
	e.Failure, e.Retryable, e.RetryAfterS = f.Kind, f.Retryable, f.RetryAfterSeconds
	switch f.Kind {
	case coord.FailAuth, coord.FailQuota, coord.FailRateLimit, coord.FailBadRequest, coord.FailProvider,
		coord.FailStall, coord.FailCircuitOpen:
		e.Kind = "provider"
	}
	return e
}

// runStreamed is the main job under --stream-events: the run's events as
// JSON lines on stdout, ending with one "finished" line, and nothing on
// stderr but warnings and the closing error. Like any run of the CLI it
// is a turn of a session (so: --continue, --session-id) unless --no-logs.
func runStreamed(ctx context.Context, env *Env, rq app.Request, outputFile string, schema int, so app.SessionOptions) error {
	s := &eventStream{w: env.Stdout, now: env.Now, schema: schema}
	rq.Automation = true
	rq.Observe = func(sub *event.Subscription, info app.RunInfo) {
		s.logDir = info.LogDir
		for {
			e, ok := sub.Next(nil)
			if !ok {
				return
			}
			if w, ok := e.(event.Warning); ok {
				fmt.Fprintln(env.Stderr, w.Line()) // stderr holds the warnings, as without the stream
			}
			if s.schema == event.SchemaVersion {
				s.writeRecord(event.ToRecord(e))
			} else if l, ok := s.line(e); ok {
				s.write(l)
			}
		}
	}
	if schema != event.SchemaVersion {
		rq.ObserveSkips = []event.Type{event.TypeRunFinished}
	}
	if outputFile != "" {
		if err := checkWritable(outputPath(env, outputFile)); err != nil {
			err = usageErr("cannot write --output-file: %v", err)
			s.finishedErr(err, "config")
			return err
		}
	}
	out, err := s.execute(ctx, env, rq, so)
	if err != nil {
		kind := "config"
		if codeOf(err) == ExitExecution {
			kind = "execution"
		}
		s.finishedErr(err, kind)
		return err
	}
	printLateWarnings(env, out)
	err = finishQuiet(env, outputFile, out)
	s.finished(out, codeOf(err))
	return err
}

// execute runs rq as the next turn of the session so names (a new one
// when it names none), or on its own under --no-logs.
func (s *eventStream) execute(ctx context.Context, env *Env, rq app.Request, so app.SessionOptions) (*app.Outcome, error) {
	if rq.NoLogs && !so.Continue && so.ID == "" {
		return app.Execute(ctx, env.app(), rq)
	}
	sess, err := openSession(ctx, env, &rq, so, false)
	if err != nil {
		return nil, err
	}
	defer closeSession(ctx, env, sess)
	out, err := sess.Turn(ctx, rq, false)
	s.session = sess.Info().ID
	return out, err
}

// finishQuiet is finish without printing: the stream's finished line
// says it all.
func finishQuiet(env *Env, outputFile string, out *app.Outcome) error {
	discard := *env
	discard.Stdout, discard.Stderr = io.Discard, io.Discard
	return finish(&discard, true, outputFile, out)
}

// writeRecord writes one line in the one event schema; its sequence
// number is the run's own.
func (s *eventStream) writeRecord(r event.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq = max(s.seq, r.Seq)
	b, _ := json.Marshal(r)
	s.w.Write(append(b, '\n')) // a reader that went away cannot be told
}

// finishedRecord is the last line of a schema-2 stream: the run's result
// in the record's fields.
func (s *eventStream) finishedRecord(out *app.Outcome, code int, err error) {
	s.mu.Lock()
	seq := s.seq + 1
	s.mu.Unlock()
	r := event.Record{V: event.SchemaVersion, Seq: seq, Time: s.now().UTC(), Type: event.TypeFinished, ExitCode: &code, LogDir: s.logDir}
	if out == nil {
		r.Status = "error"
		if err != nil {
			r.Err = err.Error()
		}
		s.writeRecord(r)
		return
	}
	res := out.Result
	total := res.TotalUsage()
	r.Status, r.Agent, r.Reason, r.Votes = string(res.Status), res.Winner, res.How, res.Tally
	r.InputTokens, r.OutputTokens, r.CostUSD = total.InputTokens, total.OutputTokens, res.TotalCost()
	r.DurationMS = float64(res.Duration.Microseconds()) / 1000
	r.Fallback, r.GraceExpired, r.LogDir, r.AnswerFile, r.Failures = res.Fallback, res.GraceExpired, out.LogDir, out.AnswerFile, res.Failures
	if res.Status == orchestrator.Completed {
		r.Text = res.Final
	} else if res.Err != nil {
		r.Err = res.Err.Error()
	}
	r.Usage = map[string]event.UsageRecord{}
	for id, u := range res.Usage {
		r.Usage[id] = event.UsageRecord{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, ReasoningTokens: u.ReasoningTokens,
			CachedTokens: u.CachedTokens, CostUSD: res.Cost[id]}
	}
	s.writeRecord(r)
}

// finished writes the last line of a run that ran.
func (s *eventStream) finished(out *app.Outcome, code int) {
	if s.schema == event.SchemaVersion {
		s.finishedRecord(out, code, nil)
		return
	}
	res := out.Result
	total := res.TotalUsage()
	cost := res.TotalCost()
	ms := float64(res.Duration.Microseconds()) / 1000
	l := streamLine{Type: "finished", Status: string(res.Status), Winner: res.Winner, How: res.How,
		Votes: res.Tally, Usage: res.Usage, TotalUsage: &total, CostUSD: &cost, DurationMS: &ms,
		Fallback: res.Fallback, GraceExpired: res.GraceExpired, LogDir: out.LogDir, AnswerFile: out.AnswerFile,
		ExitCode: &code, SessionID: s.session}
	if res.Status == orchestrator.Completed {
		l.FinalAnswer = &res.Final
	}
	if res.Err != nil && res.Status != orchestrator.Completed {
		l.Error = &streamError{Message: res.Err.Error(), Kind: string(res.Status)}
		if res.Status == orchestrator.Failed {
			// The first agent's failure stands for the run's: with one
			// agent it is the run's; with a team, every agent's is in the
			// agent_failed lines.
			l.Error.Kind = "failed"
			if len(res.Failures) > 0 {
				f := agentError(res.Failures[0].Agent, res.Err.Error(), "failed", &res.Failures[0])
				f.Kind = "failed"
				l.Error = f
			}
		}
	}
	s.write(l)
}

// finishedErr writes the last line of a run that could not start.
func (s *eventStream) finishedErr(err error, kind string) {
	code := codeOf(err)
	if s.schema == event.SchemaVersion {
		s.finishedRecord(nil, code, err)
		return
	}
	l := streamLine{Type: "finished", Status: "error", ExitCode: &code, LogDir: s.logDir,
		Error: &streamError{Message: err.Error(), Kind: kind}}
	if pe, ok := errors.AsType[*llm.Error](err); ok {
		l.Error.Provider, l.Error.Model, l.Error.Status = pe.Provider, pe.Model, pe.Status
	}
	s.write(l)
}

// readHistory reads --history-file: a JSON array of {"role", "content"}
// messages, oldest first, each role "user" or "assistant".
func readHistory(env *Env, path string) ([]llm.Message, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.WorkDir, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("--history-file: %v", err)
	}
	var msgs []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(b, &msgs); err != nil {
		return nil, usageErr("--history-file %s: want a JSON array of {\"role\": \"user\"|\"assistant\", \"content\": \"…\"}: %v", path, err)
	}
	out := make([]llm.Message, 0, len(msgs))
	for i, m := range msgs {
		if r := llm.Role(m.Role); r != llm.RoleUser && r != llm.RoleAssistant {
			return nil, usageErr("--history-file %s: message %d has role %q; want \"user\" or \"assistant\"", path, i, m.Role)
		}
		out = append(out, llm.Message{Role: llm.Role(m.Role), Content: m.Content})
	}
	return out, nil
}
