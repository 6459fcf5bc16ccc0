package event

// Warning is something the run does not do as asked, or could not keep,
// said once in words: a config key it ignores, a tool an agent goes
// without, a log file it could not write. The application publishes it
// (not the orchestrator), so every surface that shows a run's events — the
// displays, --stream-events, massgen serve's event stream, the Web UI, the
// Go API and the Python package — sees the same warnings. Warnings found
// before the run starts (the config's, the team's) come before
// run_started.
type Warning struct {
	Header
	Agent string // the agent it is about, when one
	// Where is the config position it is about ("config.yaml:12:3"), for
	// a warning of the config; "" otherwise.
	Where string
	Text  string // the warning, without a "warning:" prefix
}

// TypeWarning is Warning's type. It is not in Types, which lists what the
// orchestrator publishes.
const TypeWarning Type = "warning"

func (Warning) Type() Type                { return TypeWarning }
func (e Warning) withHead(h Header) Event { e.Header = h; return e }
func (e Warning) record() Record          { return Record{Agent: e.Agent, Where: e.Where, Text: e.Text} }

// Line is the warning as the command line prints it on stderr:
// "warning: TEXT", or "WHERE: warning: TEXT" for a config position.
func (e Warning) Line() string {
	if e.Where != "" {
		return e.Where + ": warning: " + e.Text
	}
	return "warning: " + e.Text
}
