package codex

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/llm"
)

// rollout reads the session file Codex writes as it works
// (CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<thread id>.jsonl): it holds a
// token_usage_record per model response, which `codex exec --json` does
// not print (it sums a turn's usage at turn.completed, and a turn cut
// short prints none). Reading it gives one ModelCall per response, and a
// cancelled task's usage up to its last response.
type rollout struct {
	home   string // CODEX_HOME
	thread string
	path   string
	off    int64
	last   time.Time // the previous record (or the task's start)
	usage  llm.Usage // every record's, summed
	n      int       // records read
}

// record is a rollout line, as far as it is read.
type record struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   struct {
		Type  string `json:"type"`
		Usage *usage `json:"usage"`
	} `json:"payload"`
}

// read returns a ModelCall per response recorded since the last read.
func (r *rollout) read() []agent.Outcome {
	if r.thread == "" {
		return nil
	}
	if r.path == "" {
		m, _ := filepath.Glob(filepath.Join(r.home, "sessions", "*", "*", "*", "rollout-*-"+r.thread+".jsonl"))
		if len(m) == 0 {
			return nil
		}
		r.path = m[0]
	}
	f, err := os.Open(r.path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, r.off, 1<<40))
	if err != nil {
		return nil
	}
	var out []agent.Outcome
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break // a line still being written: read it next time
		}
		line := b[:i]
		b = b[i+1:]
		r.off += int64(i + 1)
		var rec record
		if json.Unmarshal(line, &rec) != nil {
			continue
		}
		switch {
		case rec.Type == "event_msg" && rec.Payload.Type == "task_started":
			r.last = rec.Timestamp
		case rec.Type == "token_usage_record" && rec.Payload.Usage != nil:
			u := rec.Payload.Usage.llm()
			mc := agent.ModelCall{Usage: u}
			if !r.last.IsZero() && rec.Timestamp.After(r.last) {
				mc.Duration = rec.Timestamp.Sub(r.last)
			}
			r.last = rec.Timestamp
			r.usage.Add(u)
			r.n++
			out = append(out, mc)
		}
	}
	return out
}

func (u *usage) llm() llm.Usage {
	return llm.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, ReasoningTokens: u.ReasoningOutputTokens,
		CachedTokens: u.CachedInputTokens, CacheWriteTokens: u.CacheWriteInputTokens}
}
