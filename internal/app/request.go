package app

import (
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/orchestrator"
)

// Request is one run as the CLI flags, a server request or the public Go
// API describe it: the question, then one group per concern. The groups
// are embedded, so a field reads as req.Config; a literal names its group:
//
//	app.Request{Question: q, Team: app.Team{Config: "team.yaml"}, Logging: app.Logging{NoLogs: true}}
type Request struct {
	Question  string
	Team      // which team answers
	Overrides // settings over the config's, from flags or a caller
	Client    // what an API client brings with the question
	Files     // files and paths given to the agents
	Logging   // where and how the run logs
	Resume    // the session turn this run is, and what it carries
	Observer  // how a caller watches the run
}

// Team says which team answers: at most one of Config, ConfigYAML, Agents
// and Model; none means discovery.
type Team struct {
	Config string // file or @examples/NAME
	// ConfigYAML is a MassGen config given as a value; ConfigName names it
	// in diagnostics (default "config.yaml").
	ConfigYAML []byte
	ConfigName string
	// Agents is a team given in code, with the defaults of New for the rest.
	Agents []config.Agent
	// Model is a quick single agent, with Backend, BaseURL and
	// SystemMessage (massgen --model).
	Model         string
	Backend       string
	BaseURL       string
	SystemMessage string
	// Teams, when set, shares one team per config across runs (massgen
	// serve); nil builds a fresh team for this run.
	Teams *TeamCache
}

// Overrides are settings over the config's, from the command line, a
// server request or massgen eval.
type Overrides struct {
	// SingleAgent runs only this agent of the team (FirstAgent: the first),
	// Quick gives each agent one answer and no final presentation
	// (MassGen's --single-agent and --quick; resolve.go).
	SingleAgent string
	Quick       bool
	// Personas is --personas: a diversity mode turns persona generation
	// on with it, "off" turns it off; "" leaves the config's setting.
	Personas string
	// CoordinationMode is --coordination-mode: "decomposition" or "voting"
	// over the config's coordination_mode; "" leaves it.
	CoordinationMode string
	// EvalCriteria replace the config's checklist criteria
	// (--eval-criteria FILE.json).
	EvalCriteria []coord.Criterion
	Timeout      float64 // seconds; 0 = the config's
	// MaxCostUSD and MaxTokens, when positive, are the run's budget over
	// the config's max_cost_usd and max_total_tokens (massgen eval's
	// budget per item).
	MaxCostUSD float64
	MaxTokens  int64
}

// Client is what an API client (massgen serve) brings with the question.
type Client struct {
	// History and ClientTools are the earlier turns of the conversation,
	// and the client's own tools.
	History     []llm.Message
	ClientTools []llm.ToolDef
	// Params are provider parameters for every agent's requests, over the
	// config's (a client's sampling parameters for a single-model run).
	Params map[string]any
	// FinalFormat, when set, is the shape of final answer the client
	// asked for (response_format).
	FinalFormat *FinalFormat
}

// Files are the files and paths given to the agents.
type Files struct {
	// ContextPaths are shared with the agents that have a workspace, on
	// top of the config's orchestrator.context_paths (--cwd-context).
	ContextPaths []config.ContextPath
	// MissingRefs are the question's @words that look like files but name
	// none (MissingAtReferences): the run warns of each, naming it.
	MissingRefs []string
	// WorkspaceFiles are laid in each agent's workspace, through its
	// Guard, before the run: --execute-plan's tasks/plan.json, which also
	// turns task planning on, in filesystem mode (tasks.go).
	WorkspaceFiles map[string][]byte
}

// Logging says where and how the run logs.
type Logging struct {
	NoLogs     bool
	LogDir     string
	Debug      bool
	Automation bool
	Args       []string // command line, recorded in execution_metadata.yaml
}

// Resume makes the run a turn of a session and carries what an earlier
// turn left.
type Resume struct {
	// Turn, when set, makes this run a turn of a session (session.go).
	Turn *TurnLog
	// PreviousTurn is the log directory of the session's previous turn:
	// with filesystem memory, its winner's memories start this run (kit.go).
	PreviousTurn string
	// Seed are answers accepted before the run (an interrupted session
	// turn resumed): the run starts from them instead of asking again.
	Seed []orchestrator.Seed
	// SeedVotes are the votes of the interrupted turn's last epoch, carried
	// with Seed: their voters are not asked again.
	SeedVotes []coord.Vote
}

// Observer is how a caller watches the run.
type Observer struct {
	// Observe, when set, is called once the team is built, from its own
	// goroutine, with a subscription to the run's events (everything but
	// ObserveSkips) and what the run is (RunInfo: the team, the log
	// directory, the deadline, the broker for more subscribers). It must
	// consume the subscription until it ends.
	Observe func(sub *event.Subscription, info RunInfo)
	// ObserveSkips are the event types Observe's subscription leaves out.
	ObserveSkips []event.Type
}

// TurnLog places a session turn's logs and records its events.
type TurnLog struct {
	// N is the turn's number. Nested logs it in <SessionDir>/turn_<N>/
	// (SessionDir "" creates the session's log_<timestamp>/ first); else
	// the run logs at the top of a new log_<timestamp>/, as a one-question
	// run does, which then is the session's directory.
	N          int
	Nested     bool
	SessionDir string
	// Persist, when set, stores the run's events as they are published,
	// before anyone sees them (event.Broker.Persist: deltas never reach
	// it, and it must return once the event is durable). Its first error
	// is a warning of the run; the event is shown all the same.
	Persist func(event.Event) error
	// Opened, when set, is told the run's log directory as soon as it
	// exists, before the run starts: a turn killed at any point can be
	// resumed from the replay log there. Its error is a warning of the run.
	Opened func(logDir string) error
}
