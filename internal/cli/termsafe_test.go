package cli

import (
	"strings"
	"testing"
)

// (The answer holds no \r: the sim's inline scenario is written back to
// YAML on its way to the simulator, and a \r there does not survive.)
//
// Escape and OSC sequences in a question, a model's answer and a tool's
// output reach stderr's progress lines shown, not obeyed: no raw ESC, BEL
// or CR byte gets to the terminal. Stdout, a pipe here, keeps the answer
// byte for byte.
func TestControlCharactersFromOutsideAreShownNotObeyedOnStderr(t *testing.T) {
	const cfg = `
agent:
  id: a
  backend:
    type: sim
    model: sim-a
    custom_tools:
      - {type: command, name: shout, command: [cat], description: Echo the input., parameters: {type: object, properties: {w: {type: string}}}}
    scenario:
      models:
        sim-a:
          steps:
            - calls: [{name: custom_tool__shout, arguments: '{"w":"tool \u001b]0;pwned-tool\u0007 out\r"}'}]
            - answer: "Paris \x1b]0;pwned\x07 and \x1b[2J cleared \u009b31m"
`
	question := "What is \x1b]0;pwned-q\x07 the capital \x1b[2J of\rFrance?"
	r := massgen(t, t.Context(), map[string]string{"c.yaml": cfg}, nil, "--display", "plain", "--config", "c.yaml", question)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if i := strings.IndexAny(r.stderr, "\x1b\x07\r\u009b"); i >= 0 {
		t.Errorf("stderr holds a raw control character at %d: %q", i, r.stderr[max(0, i-60):min(len(r.stderr), i+60)])
	}
	// The text is still there, readable.
	for _, want := range []string{`\x1b]0;pwned\x07`, `\x1b[2J`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "Paris \x1b]0;pwned\x07 and \x1b[2J cleared") {
		t.Errorf("stdout (a pipe) does not keep the answer as it is: %q", r.stdout)
	}
}
