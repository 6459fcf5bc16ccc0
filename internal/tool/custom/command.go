package custom

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// maxOutput bounds what a command tool's stdout may put before the model.
const maxOutput = 1 << 20

// CommandSpec is an executable offered as a tool (`type: command`).
type CommandSpec struct {
	Name        string
	Description string
	Argv        []string // the executable and its arguments
	Env         []string // KEY=VALUE, over massgen's environment
	Dir         string   // working directory ("" = massgen's)
	// Parameters is the JSON Schema of the arguments; nil = any object.
	Parameters map[string]any
	Timeout    time.Duration // 0 = DefaultTimeout
}

// Command is a tool that runs spec.Argv for each call: the call's JSON
// arguments on its stdin, its stdout the result (a JSON string is
// unquoted; anything else is passed as it is). A non-zero exit is an error
// result with the end of its stderr.
func Command(spec CommandSpec) tool.Tool {
	params := spec.Parameters
	if params == nil {
		params = map[string]any{"type": "object"}
	}
	return &commandTool{spec: spec, def: llm.ToolDef{Name: spec.Name, Description: spec.Description, Parameters: params}}
}

type commandTool struct {
	spec CommandSpec
	def  llm.ToolDef
}

func (c *commandTool) Def() llm.ToolDef { return c.def }

func (c *commandTool) Call(ctx context.Context, args json.RawMessage) tool.Result {
	timeout := c.spec.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.spec.Argv[0], c.spec.Argv[1:]...)
	cmd.Dir = c.spec.Dir
	cmd.Env = append(os.Environ(), c.spec.Env...)
	cmd.Stdin = bytes.NewReader(args)
	isolate(cmd)
	// Grandchildren holding the pipes open must not hold the call.
	cmd.WaitDelay = time.Second
	out := &capped{max: maxOutput}
	stderr := newTail(2048)
	cmd.Stdout, cmd.Stderr = out, stderr
	err := cmd.Run()
	name := c.def.Name
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return tool.Errorf("custom tool %s did not finish within %s and was stopped%s", name, timeout, stderr.note("stderr"))
	case ctx.Err() != nil:
		return tool.Errorf("custom tool %s was cancelled", name)
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return tool.Errorf("custom tool %s failed (%s)%s", name, ee.ProcessState, stderr.note("stderr"))
		}
		return tool.Errorf("custom tool %s could not run %s: %v", name, c.spec.Argv[0], err)
	}
	return tool.Result{Content: out.text()}
}

// capped keeps the first max bytes written and counts the rest.
type capped struct {
	buf     bytes.Buffer
	max     int
	dropped int
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p) // all of it is taken, kept or not: the command must not see a short write
	room := c.max - c.buf.Len()
	if room < len(p) {
		c.dropped += len(p) - max(room, 0)
		p = p[:max(room, 0)]
	}
	c.buf.Write(p)
	return n, nil
}

// text is the output for the model: a JSON string unquoted, the rest
// trimmed, with a note when some was cut.
func (c *capped) text() string {
	s := strings.TrimSpace(c.buf.String())
	var str string
	if c.dropped == 0 && json.Unmarshal([]byte(s), &str) == nil {
		s = str
	}
	if c.dropped > 0 {
		s += fmt.Sprintf("\n[output truncated: %d more bytes]", c.dropped)
	}
	return s
}
