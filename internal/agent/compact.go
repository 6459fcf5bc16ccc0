package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/llm"
)

// Context compaction: upstream MassGen v0.1.73's reactive compression.
// Providers tell how large a prompt was only after they have taken it, so
// a turn's tool loop can outgrow the model's context window; the provider
// then refuses the request (llm.ContextOverflow). Instead of ending the
// agent on what is not a bad request, the turn has the older part of its
// conversation summarised by the same model and tries again with:
//
//	the system prompt, the task (question and answers), a summary of the
//	compacted part, and the newest messages as they were
//
// where the newest part is compression_target_ratio of the turn's own
// messages (DefaultCompressionRatio, 20 %), moved back so that no tool
// result is kept without the call it answers. Unlike upstream, the task
// message is never compacted (a summary of the answers is not the
// answers), and the summary is not framed as "do not answer yet": the
// coordination rules stay what they were. If the retry overflows too, a
// second compaction keeps none of the newest messages; after that the
// turn fails with the provider's error.

// DefaultCompressionRatio is compression_target_ratio's default.
const DefaultCompressionRatio = 0.20

// maxCompactions bounds the compactions before one request.
const maxCompactions = 2

// compactHead is how many messages a turn starts with (system, task): they
// are never compacted.
const compactHead = 2

const summarySystem = `You summarize an agent's work in progress so that it can continue from your summary alone: its conversation no longer fits the model's context window.

Include:
1. What the agent was doing and why (the task as the agent understood it).
2. Work done: files created or changed (full paths), commands run, tool calls and their important results, decisions made and why.
3. Problems met and how they were resolved, or that they are still open.
4. The current state, and the next steps the agent had planned, specifically.

Be specific and complete: file paths, names, numbers and results matter more than prose. Do not add advice of your own.`

// compaction is the outcome of compacting a conversation.
type compaction struct {
	usage   llm.Usage
	removed []llm.Message // the messages the summary replaced
}

// compact rewrites req.Messages after a context overflow (window: the
// model's window in tokens when the provider said it, else 0), keeping
// keep of the turn's own messages (after compactHead) as they are. It
// reports false when there is nothing older to compact.
func compact(ctx context.Context, m llm.Model, req *llm.Request, keep float64, window int, emit Emitter) (compaction, bool) {
	msgs := req.Messages
	if len(msgs) <= compactHead {
		return compaction{}, false
	}
	own := len(msgs) - compactHead
	cut := len(msgs) - int(float64(own)*keep)
	// A kept tool result needs the assistant message that made its call.
	for cut > compactHead && cut < len(msgs) && msgs[cut].Role == llm.RoleTool {
		cut--
	}
	if cut <= compactHead {
		return compaction{}, false
	}
	removed := msgs[compactHead:cut]
	// What the summariser is shown, in characters: about half the window
	// (four characters a token) when the provider said how large it is,
	// else half of what is compacted; halved again each time the summary's
	// own request does not fit.
	budget := 200_000
	if window > 0 {
		budget = min(budget, window*2)
	} else {
		budget = min(budget, max(chars(removed)/2, 4000))
	}
	var c compaction
	var r response
	var err error
	for range 4 {
		sreq := llm.Request{Model: req.Model, Params: req.Params, Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: summarySystem},
			{Role: llm.RoleUser, Content: "Here is the conversation to summarize:\n\n" + transcript(removed, budget) +
				"\n\nSummarize the conversation above."},
		}}
		r, err = collect(ctx, m, &sreq, callsOnly{emit})
		c.usage.Add(r.usage)
		if _, over := llm.ContextOverflow(err); !over {
			break
		}
		budget /= 2
	}
	summary := strings.TrimSpace(r.text)
	if err != nil || summary == "" {
		if ctx.Err() != nil {
			return compaction{}, false
		}
		summary = "(The summary could not be written: " + errOr(err, "the model returned none") + ". Look at your workspace " +
			"and your task plan, if you keep one, to see what you had done.)"
	}
	task := msgs[1]
	task.Content += fmt.Sprintf("\n\n[CONTEXT RECOVERY] This turn's conversation outgrew the model's context window, so "+
		"its older part (%d messages) was replaced by this summary of it. Files you wrote are still in your workspace.\n"+
		"---\n%s\n---", len(removed), summary)
	out := make([]llm.Message, 0, compactHead+len(msgs)-cut)
	out = append(out, msgs[0], task)
	out = append(out, msgs[cut:]...)
	req.Messages = out
	c.removed = removed
	return c, true
}

func chars(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Arguments)
		}
	}
	return n
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

// transcript renders messages for the summariser within about budget
// characters: each message's text capped, and the middle of the whole
// left out when it is still too long (the start and the latest work
// matter most).
func transcript(msgs []llm.Message, budget int) string {
	per := max(budget/max(len(msgs), 1), 2000)
	var b strings.Builder
	for _, m := range msgs {
		switch {
		case m.Role == llm.RoleTool:
			fmt.Fprintf(&b, "[tool result]\n%s\n\n", clip(m.Content, per))
		case len(m.ToolCalls) > 0:
			fmt.Fprintf(&b, "[%s]\n%s", m.Role, clip(m.Content, per))
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "\n→ %s(%s)", c.Name, clip(c.Arguments, per/2))
			}
			b.WriteString("\n\n")
		default:
			fmt.Fprintf(&b, "[%s]\n%s\n\n", m.Role, clip(m.Content, per))
		}
	}
	return clip(b.String(), budget)
}

// clip keeps the start and the end of s within about n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n*2/3, n/3
	for head > 0 && !utf8Start(s[head]) {
		head--
	}
	t := len(s) - tail
	for t < len(s) && !utf8Start(s[t]) {
		t++
	}
	return s[:head] + fmt.Sprintf("\n[… %d characters left out …]\n", t-head) + s[t:]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// callsOnly reports the summariser's request as a model call of the
// agent's (its tokens are the agent's) but streams none of its text.
type callsOnly struct{ e Emitter }

func (callsOnly) Text(string)      {}
func (callsOnly) Reasoning(string) {}
func (c callsOnly) modelCalled(model string, u llm.Usage, d time.Duration, err error) {
	if o, ok := c.e.(modelObserver); ok {
		o.modelCalled(model, u, d, err)
	}
}
