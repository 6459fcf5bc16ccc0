package runlog

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// Agent statuses as status.json reports them.
const (
	agentIdle       = "idle"
	agentWorking    = "working"
	agentAnswered   = "answered"
	agentVoted      = "voted"
	agentFailed     = "failed"
	agentPresenting = "presenting"
	agentDone       = "done"
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

	// IgnoredFeatures are the config's settings this run does not act on
	// (never null, so scripts can test its length).
	IgnoredFeatures []string `json:"ignored_features"`
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
	Status            string    `json:"status"` // idle|working|answered|voted|failed|presenting|done
	Backend           string    `json:"backend"`
	Model             string    `json:"model"`
	Simulated         bool      `json:"simulated"`
	AnswerCount       int       `json:"answer_count"`
	LatestAnswerLabel string    `json:"latest_answer_label"`
	Vote              *VoteView `json:"vote"`
	Restarts          int       `json:"restarts"`
	Rejections        int       `json:"rejections"`
	Failures          int       `json:"failures"`
	LastError         string    `json:"last_error"`
	InputTokens       int64     `json:"input_tokens"`
	OutputTokens      int64     `json:"output_tokens"`
	CostUSD           float64   `json:"cost_usd"`
	LastActivity      time.Time `json:"last_activity,omitzero"`
}

// VoteView is an agent's vote in the current epoch.
type VoteView struct {
	VotedFor      string `json:"voted_for"`
	VotedForLabel string `json:"voted_for_label"`
	ReasonPreview string `json:"reason_preview"`
}

// ResultsView is the outcome so far.
type ResultsView struct {
	Votes              map[string]int `json:"votes"` // real id → votes in the current epoch (or the winner's tally)
	Winner             string         `json:"winner"`
	FinalAnswerPreview string         `json:"final_answer_preview"`
	// Totals over every agent and request of the run.
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// agentState is everything the Writer tracks per agent. Counters (restarts,
// failures, tokens) span the whole run; coordination fields (status,
// answers, vote) are reset per attempt like the orchestrator's own state.
type agentState struct {
	id   string
	info AgentInfo

	status       string
	answerCount  int
	latestLabel  string
	vote         *VoteView
	restarts     int
	rejections   int
	failures     int
	lastError    string
	inputTokens  int64
	costUSD      float64
	outputTokens int64
	lastActivity time.Time

	turns      int
	turnSeen   bool // a TurnStarted arrived in this attempt: context.txt exists
	prompt     string
	labels     []string
	turnStatus string // TurnStarted.Status ("presentation", …)

	out stream // agent_outputs/<id>.txt
}

func (ag *agentState) resetForAttempt() {
	ag.status = agentIdle
	ag.answerCount = 0
	ag.latestLabel = ""
	ag.vote = nil
	ag.turnSeen, ag.prompt, ag.labels, ag.turnStatus = false, "", nil, ""
	ag.out.close()
}

// agent returns the state of id, adding agents the metadata did not list
// (the log should show whatever the orchestrator reports).
func (w *Writer) agent(id string) *agentState {
	if ag, ok := w.agents[id]; ok {
		return ag
	}
	ag := &agentState{id: id, info: AgentInfo{ID: id}, status: agentIdle}
	w.agents[id] = ag
	w.order = append(w.order, id)
	return ag
}

func (w *Writer) turnStarted(ag *agentState, e event.Event) error {
	if ag == nil {
		return nil
	}
	ag.turns++
	ag.turnSeen, ag.prompt, ag.labels, ag.turnStatus = true, e.Text, slices.Clone(e.Labels), e.Status
	label := ""
	switch e.Status {
	case "presentation":
		ag.status = agentPresenting
		w.phase = phasePresenting
		label = ", presentation"
	case "post_evaluation":
		ag.status = agentWorking
		w.phase = phasePostEval
		label = ", post-evaluation"
	default:
		ag.status = agentWorking
	}
	line := "--- turn " + itoa(ag.turns) + " (epoch " + itoa(w.cur.epoch) + label + ") ---"
	return ag.out.separator(w.outPath(ag), line)
}

// answerAccepted applies DESIGN.md §2 step 2 to the view: a new answer
// invalidates every vote, and agents that had voted go back to idle until
// their next turn starts.
func (w *Writer) answerAccepted(ag *agentState, e event.Event) {
	for _, other := range w.agents {
		other.vote = nil
		if other.status == agentVoted {
			other.status = agentIdle
		}
	}
	if ag == nil {
		return
	}
	ag.status = agentAnswered
	ag.answerCount++
	ag.latestLabel = e.Label
}

func (w *Writer) voteAccepted(ag *agentState, v voteRecord) {
	if ag == nil {
		return
	}
	ag.status = agentVoted
	ag.vote = &VoteView{VotedFor: v.VotedFor, VotedForLabel: v.VotedForLabel, ReasonPreview: truncate(v.Reason, 100)}
}

// Status returns the current view.
func (w *Writer) Status() StatusView {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.view()
}

func (w *Writer) view() StatusView {
	now := w.now()
	end := now
	if !w.finishedAt.IsZero() {
		end = w.finishedAt
	}
	a := w.cur
	v := StatusView{
		Meta: StatusMeta{
			LogDir:         w.dir,
			Question:       w.question,
			StartedAt:      w.started,
			UpdatedAt:      now,
			ElapsedSeconds: max(0, end.Sub(w.started).Seconds()),
			Status:         w.status,
			Attempt:        a.n,
		},
		Coordination: CoordinationView{
			Phase:        w.phase,
			Epoch:        a.epoch,
			AnswersTotal: w.answersTotal,
			VotesInEpoch: len(a.epochVotes),
			AgentOrder:   slices.Clone(w.order),
		},
		Agents: make(map[string]AgentView, len(w.agents)),
		Results: ResultsView{
			Votes:  tally(a.epochVotes, nil),
			Winner: a.winner,
		},
	}
	v.Meta.IgnoredFeatures = append([]string{}, w.meta.IgnoredFeatures...) // [] rather than null
	if a.winVotes != nil {
		v.Results.Votes = copyMap(a.winVotes)
	}
	if a.finalAgent != "" {
		v.Results.Winner = a.finalAgent
		v.Results.FinalAnswerPreview = a.finalPreview
	}
	for id, ag := range w.agents {
		if ag.status != agentFailed {
			v.Coordination.LiveAgents++
		}
		av := AgentView{
			Status:            ag.status,
			Backend:           ag.info.Backend,
			Model:             ag.info.Model,
			Simulated:         ag.info.Simulated,
			AnswerCount:       ag.answerCount,
			LatestAnswerLabel: ag.latestLabel,
			Restarts:          ag.restarts,
			Rejections:        ag.rejections,
			Failures:          ag.failures,
			LastError:         ag.lastError,
			InputTokens:       ag.inputTokens,
			OutputTokens:      ag.outputTokens,
			CostUSD:           ag.costUSD,
			LastActivity:      ag.lastActivity,
		}
		if ag.vote != nil {
			vv := *ag.vote
			av.Vote = &vv
		}
		v.Agents[id] = av
		v.Results.InputTokens += ag.inputTokens
		v.Results.OutputTokens += ag.outputTokens
		v.Results.CostUSD += ag.costUSD
	}
	return v
}

// writeStatus rewrites status.json atomically.
func (w *Writer) writeStatus() error {
	return writeJSON(filepath.Join(w.dir, "status.json"), w.view())
}

// writeJSON writes v as indented JSON, atomically. HTML escaping is off:
// prompts and answers are full of <tags> and && that should stay readable.
func writeJSON(path string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return writeAtomic(path, b.Bytes())
}
