package llmsim

import (
	"hash/fnv"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The default policy's texts are deterministic (a test can compute them) and
// built so that answers of different models, or different answers of one
// model, are far apart by word-set Jaccard: each draws ~48 distinct words
// from a vocabulary of several hundred, seeded by (model, answer number).
// Otherwise the orchestrator's novelty check would reject simulated answers
// as near-duplicates and every simulated run would look like a novelty bug.

const taskExcerptLen = 200 // bytes of the task quoted in an answer

// promptSource is what the texts are made from: the model's name and the last
// user message (a wire-neutral request, or a Chat Completions one).
type promptSource interface {
	modelName() string
	lastUser() string
}

// defaultAnswer is the new_answer content of answer number n of the model.
func defaultAnswer(req promptSource, n int) string {
	var b strings.Builder
	b.Grow(512)
	b.WriteString("[sim model ")
	b.WriteString(req.modelName())
	b.WriteString("] Answer ")
	b.WriteString(strconv.Itoa(n))
	writeTask(&b, taskExcerpt(req))
	b.WriteByte(' ')
	writeBody(&b, seed(req.modelName(), "answer", n), 4)
	return b.String()
}

// finalText is the text of a request that offers no workflow tool: the
// scripted Final (a template when it has placeholders), else the answer the presenter is asked to present (see
// findAnswer), else a paragraph of its own.
func finalText(req promptSource, final string) string {
	if strings.Contains(final, "{") {
		// A template: {answer} is the answer presented (as below), {model}
		// and {question} as in answers.
		return strings.NewReplacer("{answer}", findAnswer(req.lastUser()), "{model}", req.modelName(),
			"{question}", strings.TrimRight(taskExcerpt(req), ".")).Replace(final)
	}
	if final != "" {
		return final
	}
	if a := findAnswer(req.lastUser()); a != "" {
		return "[sim model " + req.modelName() + "] Final answer: " + a
	}
	var b strings.Builder
	b.WriteString("[sim model ")
	b.WriteString(req.modelName())
	b.WriteString("] Final answer")
	writeTask(&b, taskExcerpt(req))
	b.WriteByte(' ')
	writeBody(&b, seed(req.modelName(), "final", 0), 3)
	return b.String()
}

// noToolText is the plain reply of the no_tool_call fault.
func noToolText(req promptSource) string {
	var b strings.Builder
	b.WriteString("[sim model ")
	b.WriteString(req.modelName())
	b.WriteString("] I will answer in plain text instead of calling a tool. ")
	writeBody(&b, seed(req.modelName(), "plain", 0), 2)
	return b.String()
}

func writeTask(b *strings.Builder, task string) {
	if task == "" {
		b.WriteByte('.')
		return
	}
	b.WriteString(" to: ")
	b.WriteString(task)
	if r, _ := utf8.DecodeLastRuneInString(task); !strings.ContainsRune(".?!", r) {
		b.WriteByte('.')
	}
}

// taskExcerpt is the start of the task: the text inside MassGen's
// <ORIGINAL MESSAGE> ... <END OF ORIGINAL MESSAGE> markers when the last user
// message has them, else that whole message; whitespace collapsed.
func taskExcerpt(req promptSource) string {
	msg := req.lastUser()
	if _, rest, ok := strings.Cut(msg, "<ORIGINAL MESSAGE>"); ok {
		msg, _, _ = strings.Cut(rest, "<END OF ORIGINAL MESSAGE>")
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > taskExcerptLen {
		cut := taskExcerptLen
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = strings.TrimRightFunc(msg[:cut], unicode.IsSpace) + "..."
	}
	return msg
}

// findAnswer looks for the answer a presenter should present in a prompt:
// the one marked as the presenter's own (`id (YOUR ANSWER): "..."`, MassGen's
// presentation prompt, whose presenter is the winner), else the first
// `<agentN> ... <end of agentN>` (or `</agentN>`) block.
func findAnswer(msg string) string {
	if w := findWork(msg); w != "" { // a decomposition presenter's prompt (stop.go)
		return w
	}
	if _, rest, ok := strings.Cut(msg, `(YOUR ANSWER): "`); ok {
		// massgen quotes each answer Go-style (%q): read it back whole, so
		// a presented answer keeps its quotes and line breaks. A prompt
		// that quotes raw (an answer's own quotes unescaped) ends its
		// quoted prefix before the line does, and is read as before.
		if q, err := strconv.QuotedPrefix(`"` + rest); err == nil {
			after := rest[len(q)-1:]
			if a, err := strconv.Unquote(q); err == nil && (after == "" || after[0] == '\n' || after[0] == '\r') {
				return strings.TrimSpace(a)
			}
		}
		if end := strings.Index(rest, "\"\n"); end >= 0 {
			rest = rest[:end]
		} else {
			rest = strings.TrimSuffix(strings.TrimSpace(rest), `"`)
		}
		return strings.TrimSpace(rest)
	}
	for i := 0; ; {
		j := strings.Index(msg[i:], "<agent")
		if j < 0 {
			return ""
		}
		start := i + j
		gt := strings.IndexByte(msg[start:], '>')
		if gt < 0 {
			return ""
		}
		label := msg[start+1 : start+gt] // "agent1"
		body := msg[start+gt+1:]
		for _, end := range [...]string{"<end of " + label + ">", "</" + label + ">"} {
			if k := strings.Index(body, end); k >= 0 {
				if a := strings.TrimSpace(body[:k]); a != "" {
					return a
				}
			}
		}
		i = start + gt + 1
	}
}

// seed mixes the model name, the kind of text and the number into a seed.
func seed(model, kind string, n int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(n)))
	return h.Sum64()
}

// splitmix64 is a tiny, well-mixed generator. math/rand would do, but this
// keeps the texts identical across Go versions, so tests can pin them.
func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// writeBody writes sentences of 10-14 words, no word repeated within one
// body (a partial Fisher-Yates shuffle over the vocabulary).
func writeBody(b *strings.Builder, s uint64, sentences int) {
	var idx [len(vocabulary)]uint16
	for i := range idx {
		idx[i] = uint16(i)
	}
	used := 0
	for k := 0; k < sentences; k++ {
		if k > 0 {
			b.WriteByte(' ')
		}
		words := 10 + int(splitmix64(&s)%5)
		for w := 0; w < words && used < len(idx); w++ {
			j := used + int(splitmix64(&s)%uint64(len(idx)-used))
			idx[used], idx[j] = idx[j], idx[used]
			word := vocabulary[idx[used]]
			used++
			if w == 0 {
				b.WriteString(strings.ToUpper(word[:1]))
				b.WriteString(word[1:])
			} else {
				b.WriteByte(' ')
				b.WriteString(word)
			}
		}
		b.WriteByte('.')
	}
}

// vocabulary holds distinct plain words (a test checks they are distinct).
var vocabulary = [...]string{
	"accuracy", "adapt", "adjust", "align", "allocate", "analysis", "anchor", "angle", "approach",
	"archive", "argue", "arrange", "aspect", "assess", "assume", "audit", "balance", "baseline",
	"batch", "benchmark", "boundary", "branch", "budget", "buffer", "build", "cache", "calibrate",
	"candidate", "capacity", "capture", "careful", "cascade", "catalog", "channel", "check",
	"chosen", "clarify", "clear", "cluster", "coherent", "collect", "combine", "compare", "compile",
	"complete", "concise", "concrete", "confirm", "conflict", "consider", "consistent", "constraint",
	"context", "contrast", "convert", "correct", "cost", "coverage", "criteria", "critical",
	"current", "cycle", "dataset", "debate", "decide", "default", "define", "degree", "delay",
	"deliver", "demand", "density", "depend", "deploy", "derive", "design", "detail", "detect",
	"develop", "diagram", "direct", "discover", "distinct", "document", "domain", "draft",
	"durable", "dynamic", "early", "edge", "effect", "efficient", "element", "emphasis", "enable",
	"encode", "engine", "ensure", "entire", "entry", "estimate", "evaluate", "event", "evidence",
	"exact", "example", "expand", "expect", "explain", "explicit", "explore", "export", "extend",
	"factor", "feature", "feedback", "field", "filter", "final", "focus", "format", "forward",
	"frame", "function", "gather", "general", "goal", "gradual", "graph", "ground", "group",
	"guard", "guide", "handle", "harmony", "heuristic", "hidden", "highlight", "history", "honest",
	"hybrid", "identify", "impact", "implement", "improve", "include", "index", "infer", "initial",
	"input", "insight", "inspect", "instance", "integrate", "intent", "interval", "invariant",
	"isolate", "iterate", "journal", "judge", "keep", "kernel", "label", "layer", "layout",
	"lean", "ledger", "level", "limit", "linear", "list", "local", "logic", "loop", "margin",
	"market", "measure", "medium", "memory", "merge", "method", "metric", "minimal", "mirror",
	"mode", "model", "modest", "module", "monitor", "narrow", "native", "natural", "network",
	"neutral", "node", "normal", "notice", "number", "object", "observe", "offer", "operate",
	"optimal", "option", "order", "origin", "outcome", "outline", "output", "overlap", "owner",
	"parallel", "parameter", "partial", "pattern", "pause", "peer", "phase", "pipeline", "plan",
	"pointer", "policy", "portable", "practical", "precise", "predict", "prefer", "prepare",
	"present", "preserve", "primary", "principle", "priority", "probe", "process", "profile",
	"project", "prompt", "proof", "propose", "protect", "prototype", "proven", "quality", "query",
	"quick", "random", "range", "rank", "rapid", "rate", "reason", "recall", "record", "reduce",
	"refine", "region", "relevant", "reliable", "remote", "render", "repeat", "report", "request",
	"resolve", "resource", "result", "review", "revise", "robust", "route", "runtime", "sample",
	"scale", "schema", "scope", "score", "section", "secure", "segment", "select", "sequence",
	"series", "session", "signal", "simple", "single", "sketch", "slice", "source", "span",
	"stable", "stage", "standard", "state", "steady", "step", "storage", "strategy", "stream",
	"strict", "structure", "subset", "summary", "support", "survey", "symbol", "system", "table",
	"target", "task", "tempo", "tension", "test", "theme", "theory", "thread", "timely", "token",
	"topic", "trace", "track", "trade", "transfer", "trend", "trial", "tune", "typical", "unify",
	"unique", "update", "usage", "valid", "value", "variant", "vector", "verify", "version",
	"view", "volume", "weigh", "window", "workflow", "yield", "zone",
}
