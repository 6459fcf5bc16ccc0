package cli

import (
	"io"

	"github.com/massgen/massgen/internal/app"
)

// stdinConfigName names a config read from standard input in diagnostics
// ("<stdin>:3:5: …"). Its relative paths start in the working directory.
const stdinConfigName = "<stdin>"

// maxStdinConfig bounds what --config - reads; the config parser refuses
// far smaller documents (inputlimit), this only keeps a runaway pipe from
// filling memory first.
const maxStdinConfig = 64 << 20

// stdinConfig applies --config -: the config is read from standard input
// (YAML or JSON), so a program can hand massgen a config it built without a
// temporary file — the Python package's massgen.run(config_dict=…) does.
// Standard input then holds the config, so a question must be given.
func stdinConfig(env *Env, rq *app.Request, haveQuestion bool) error {
	if rq.Config != "-" {
		return nil
	}
	if !haveQuestion {
		return usageErr("--config - reads the config from standard input, so the question must be given as an argument")
	}
	data, err := io.ReadAll(io.LimitReader(env.Stdin, maxStdinConfig+1))
	if err != nil {
		return usageErr("--config -: reading standard input: %v", err)
	}
	if len(data) > maxStdinConfig {
		return usageErr("--config -: the config on standard input is larger than %d MB", maxStdinConfig>>20)
	}
	if len(data) == 0 {
		return usageErr("--config -: standard input is empty; it must hold the config (YAML or JSON)")
	}
	rq.Config, rq.ConfigYAML, rq.ConfigName = "", data, stdinConfigName
	return nil
}
