package subagent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/massgen/massgen/internal/tool"
)

// Inbox carries the parent's runtime messages (send_message_to_subagent)
// to the agents of a running child: each agent reads each message meant
// for it once, appended to the result of its next tool call (upstream
// injects them at the next tool call too).
type Inbox struct {
	mu   sync.Mutex
	msgs []message
	read map[string]int // agent → messages it has seen
}

type message struct {
	text    string
	targets []string // nil: every agent
}

// NewInbox returns an empty inbox.
func NewInbox() *Inbox { return &Inbox{read: map[string]int{}} }

// Post adds a message for targets (none: every agent of the child).
func (in *Inbox) Post(text string, targets []string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.msgs = append(in.msgs, message{text: text, targets: slices.Clone(targets)})
}

// Take returns the messages agent has not read yet, and marks them read.
func (in *Inbox) Take(agent string) []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []string
	for _, m := range in.msgs[in.read[agent]:] {
		if len(m.targets) == 0 || slices.Contains(m.targets, agent) {
			out = append(out, m.text)
		}
	}
	in.read[agent] = len(in.msgs)
	return out
}

type inboxKey struct{}

// WithInbox marks ctx as a child run's, whose agents read in.
func WithInbox(ctx context.Context, in *Inbox) context.Context {
	return context.WithValue(ctx, inboxKey{}, in)
}

// InboxOf is the inbox of the child run ctx belongs to, or nil.
func InboxOf(ctx context.Context) *Inbox {
	in, _ := ctx.Value(inboxKey{}).(*Inbox)
	return in
}

// Deliver wraps the tool t of agent so that its results carry the
// parent's messages for agent that arrived since its last call.
func Deliver(t tool.Tool, agent string, in *Inbox) tool.Tool {
	return appendTo(t, func() string {
		msgs := in.Take(agent)
		if len(msgs) == 0 {
			return ""
		}
		var b strings.Builder
		for _, m := range msgs {
			b.WriteString("\n\n[Message from the agent that started you]: " + m)
		}
		return b.String()
	})
}

// appendTo returns t with more's text appended to its results, keeping
// what it says of its effects (planning mode reads them).
func appendTo(t tool.Tool, more func() string) tool.Tool {
	a := &appending{Tool: t, more: more}
	if e, ok := t.(tool.Effects); ok {
		return appendingEffects{a, e}
	}
	return a
}

type appendingEffects struct {
	*appending
	tool.Effects
}

// appending is a tool whose results get more's text appended.
type appending struct {
	tool.Tool
	more func() string
}

func (a *appending) Call(ctx context.Context, args json.RawMessage) tool.Result {
	r := a.Tool.Call(ctx, args)
	if s := a.more(); s != "" {
		r.Content += s
	}
	return r
}
