package runlog

import (
	"github.com/massgen/massgen/internal/coord"

	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// StatusView is the live state of a run, as written to status.json and
// served by the HTTP server. It is a copy: holding it does not block the
// Writer, and the Writer never changes it afterwards.
type StatusView struct {
	Meta         StatusMeta           `json:"meta"`
	Coordination CoordinationView     `json:"coordination"`
	Agents       map[string]AgentView `json:"agents"`
	Results      ResultsView          `json:"results"`
}

// StatusMeta describes the run as a whole.
type StatusMeta struct {
	LogDir         string    `json:"log_dir"`
	Question       string    `json:"question"`
	StartedAt      time.Time `json:"started_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	ElapsedSeconds float64   `json:"elapsed_seconds"`
	Status         string    `json:"status"` // running|completed|timeout|failed|interrupted
	Attempt        int       `json:"attempt"`
	// PID and Host name the process that runs (ran) the run. A run whose
	// status is still "running" while that process is gone died without
	// finishing: see Process.Dead.
	PID  int    `json:"pid"`
	Host string `json:"host"`
	// IgnoredFeatures are config features this run does not do.
	IgnoredFeatures []string `json:"ignored_features"`
	// LogsIncomplete, when set, says which files of the log directory
	// could not be written whole, and why (a full disk): those logs end
	// early. The run itself is not affected.
	LogsIncomplete string `json:"logs_incomplete,omitempty"`
}

// CoordinationView is where coordination stands in the current attempt.
type CoordinationView struct {
	Phase        string `json:"phase"` // coordinating|presenting|post_evaluation|done
	Epoch        int    `json:"epoch"` // answers accepted in this attempt
	AnswersTotal int    `json:"answers_total"`
	VotesInEpoch int    `json:"votes_in_epoch"`
	LiveAgents   int    `json:"live_agents"` // agents not failed
	// AgentOrder is the config order; JSON objects have none, and displays
	// want the columns in the order the user wrote them.
	AgentOrder []string `json:"agent_order"`
}

// AgentView is one agent's state.
type AgentView struct {
	// Status is idle|working|answered|voted|restarted|failed|stalled|presenting|done.
	Status string `json:"status"`
	// StalledSeconds is, for a stalled agent, the time since its turn last
	// produced anything: since its model request last received a byte when
	// one is in flight (SecondsSinceLastByte), else since its last event.
	StalledSeconds    float64   `json:"stalled_seconds,omitempty"`
	Backend           string    `json:"backend"`
	Model             string    `json:"model"`
	Simulated         bool      `json:"simulated"`
	AnswerCount       int       `json:"answer_count"`
	LatestAnswerLabel string    `json:"latest_answer_label"` // stable: agent<position>.<revision>
	Vote              *VoteView `json:"vote"`
	Restarts          int       `json:"restarts"`
	Rejections        int       `json:"rejections"`
	Failures          int       `json:"failures"` // failed turns (errors, idle streams, turn timeouts)
	LastError         string    `json:"last_error"`
	// LastFailure is LastError as data: kind, provider, model, status,
	// retryable (absent before the agent's first failure).
	LastFailure  *coord.Failure `json:"last_failure,omitempty"`
	InputTokens  int64          `json:"input_tokens"`
	OutputTokens int64          `json:"output_tokens"`
	CostUSD      float64        `json:"cost_usd"`
	// ToolCalls counts its calls of its own tools (workflow tools aside),
	// ToolErrors those that failed; ToolRounds its responses that ran tools.
	ToolCalls    int       `json:"tool_calls"`
	ToolErrors   int       `json:"tool_errors"`
	ToolRounds   int       `json:"tool_rounds"`
	LastActivity time.Time `json:"last_activity,omitzero"`

	// SecondsSinceLastByte is, for an agent stalled in a model request,
	// how long that request has received no byte (a hung provider shows
	// here before the idle-stream timeout fails its turn).
	SecondsSinceLastByte float64 `json:"seconds_since_last_byte,omitempty"`
}

// VoteView is an agent's vote in the current epoch.
type VoteView struct {
	VotedFor       string `json:"voted_for"`
	VotedForLabel  string `json:"voted_for_label"`  // anonymous, as the voter named it
	VotedForAnswer string `json:"voted_for_answer"` // stable label of the answer
	ReasonPreview  string `json:"reason_preview"`
}

// ResultsView is the outcome so far.
type ResultsView struct {
	Votes              map[string]int `json:"votes"` // real id → votes in the current epoch (or the winner's tally)
	Winner             string         `json:"winner"`
	WinnerLabel        string         `json:"winner_label,omitempty"` // stable label of the winning answer
	FinalAnswerPreview string         `json:"final_answer_preview"`
	// Fallback says why the final answer is the winner's stored answer, not
	// a presentation ("" otherwise); GraceExpired is true when the
	// presentation did not end by the run deadline plus the presentation
	// grace. Both are set when the run finishes.
	Fallback     string `json:"fallback"`
	GraceExpired bool   `json:"grace_expired"`
	// Totals over every agent and request of the run.
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// StatusOf is the status.json form of a run view at time now. The log
// writer writes it; the HTTP server serves it for runs it has in memory.
func StatusOf(s event.Snapshot, logDir string, now time.Time, p Process) StatusView {
	end := now
	if !s.FinishedAt.IsZero() {
		end = s.FinishedAt
	}
	v := StatusView{
		Meta: StatusMeta{
			LogDir:          logDir,
			Question:        s.Question,
			StartedAt:       s.StartedAt,
			UpdatedAt:       now,
			ElapsedSeconds:  max(0, end.Sub(s.StartedAt).Seconds()),
			Status:          s.Status,
			Attempt:         s.Attempt,
			PID:             p.PID,
			Host:            p.Host,
			IgnoredFeatures: append([]string{}, s.Ignored...), // [] rather than null
		},
		Coordination: CoordinationView{
			Phase:        s.Phase,
			Epoch:        s.Epoch,
			AnswersTotal: len(s.Answers),
			VotesInEpoch: len(s.Votes),
			AgentOrder:   make([]string, len(s.Agents)),
		},
		Agents: make(map[string]AgentView, len(s.Agents)),
		Results: ResultsView{
			Votes:        s.Tally,
			Winner:       s.Winner,
			WinnerLabel:  s.WinnerLabel,
			Fallback:     s.Fallback,
			GraceExpired: s.GraceExpired,
			InputTokens:  s.Usage.InputTokens,
			OutputTokens: s.Usage.OutputTokens,
			CostUSD:      s.Usage.CostUSD,
		},
	}
	if v.Meta.IgnoredFeatures == nil {
		v.Meta.IgnoredFeatures = []string{}
	}
	if s.FinalAgent != "" {
		v.Results.Winner = s.FinalAgent
		v.Results.FinalAnswerPreview = truncate(s.Final, 200)
	}
	for i, ag := range s.Agents {
		v.Coordination.AgentOrder[i] = ag.ID
		if ag.Status != event.StatusFailed {
			v.Coordination.LiveAgents++
		}
		av := AgentView{
			Status:            ag.Status,
			StalledSeconds:    ag.StalledSeconds,
			Backend:           ag.Backend,
			Model:             ag.Model,
			Simulated:         ag.Simulated,
			AnswerCount:       ag.Answers,
			LatestAnswerLabel: ag.LatestAnswer,
			Restarts:          ag.Restarts,
			Rejections:        ag.Rejections,
			Failures:          ag.Failures,
			LastError:         ag.LastError,
			LastFailure:       ag.LastFailure,
			InputTokens:       ag.Usage.InputTokens,
			OutputTokens:      ag.Usage.OutputTokens,
			CostUSD:           ag.Usage.CostUSD,
			ToolCalls:         ag.ToolCalls,
			ToolErrors:        ag.ToolErrors,
			ToolRounds:        ag.ToolRounds,
			LastActivity:      ag.LastActivity,

			SecondsSinceLastByte: ag.SinceLastByte.Seconds(),
		}
		if vote := ag.Vote; vote != nil {
			av.Vote = &VoteView{VotedFor: vote.Target, VotedForLabel: vote.TargetLabel, VotedForAnswer: vote.TargetAnswer,
				ReasonPreview: truncate(vote.Reason, 100)}
		}
		v.Agents[ag.ID] = av
	}
	return v
}

// Status returns the current view.
func (w *Writer) Status() StatusView {
	w.mu.Lock()
	defer w.mu.Unlock()
	v := StatusOf(w.snapshot(), w.dir, w.now(), w.proc)
	v.Meta.LogsIncomplete = w.gaps.note()
	return v
}

// writeStatus rewrites status.json atomically (temporary file, rename).
// The status of a finished run is the one file a reader cannot do
// without (a run whose status.json still says running looks dead once its
// process is gone): on a full disk it gets the reserve's space, and as a
// last resort it is overwritten in place.
func (w *Writer) writeStatus() error {
	path := filepath.Join(w.dir, "status.json")
	v := StatusOf(w.snapshot(), w.dir, w.now(), w.proc)
	note := w.gaps.note()
	v.Meta.LogsIncomplete = note
	data, err := encodeJSON(v)
	if err != nil {
		return err
	}
	if v.Meta.Status == event.RunRunning {
		// A failure here passes: the next rewrite may succeed, and the
		// process is alive, so the run does not look dead meanwhile.
		if err := writeAtomic(path, data); err != nil {
			return err
		}
		w.noted = note
		return nil
	}
	err = w.putReserved(path, data)
	if err != nil && isNoSpace(err) {
		// Compact, to fit the blocks the file has if at all possible.
		var c bytes.Buffer
		if json.Compact(&c, data) == nil {
			data = append(c.Bytes(), '\n')
		}
		if overwrite(path, data) == nil {
			w.gaps.set(path, nil)
			err = nil
		}
	}
	if err == nil {
		w.noted = note
	}
	return err
}

// overwrite writes data over the file at path in place, then cuts it to
// data's length: no new file, and as long as data is no longer than the
// file, no new blocks. It is not atomic (a reader may see a mix while it
// writes), which is why it is only the last resort.
func overwrite(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteAt(data, 0)
	terr := f.Truncate(int64(len(data)))
	return errors.Join(werr, terr, f.Close())
}

// encodeJSON is v as indented JSON. HTML escaping is off: prompts and
// answers are full of <tags> and && that should stay readable.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Process identifies the process that runs a run.
type Process struct {
	PID  int
	Host string
}

func thisProcess() Process {
	host, _ := os.Hostname() // best effort: "" only makes Dead less sure
	return Process{PID: os.Getpid(), Host: host}
}

// ThisProcess is the current process, as status.json names it.
func ThisProcess() Process { return thisProcess() }

// Dead reports whether a status.json describes a run that died: it still
// says "running", but the process that wrote it, on this host, is gone.
// (A run on another host cannot be checked from here: not dead.)
func Dead(v StatusView) bool {
	if v.Meta.Status != event.RunRunning || v.Meta.PID <= 0 {
		return false
	}
	if host, _ := os.Hostname(); v.Meta.Host != host {
		return false
	}
	return !processAlive(v.Meta.PID)
}
