package app

// command_line_docker_credentials.env_file: the .env files whose variables
// an agent's Docker container gets, as MassGen v0.1.73 loads them.

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/redact"
)

// dockerEnvFiles are the files env_file loads, in upstream's order:
// ~/.massgen/.env, the given file, then ./.env; a later file's variable
// overrides an earlier one's. A relative file is taken against workDir.
func dockerEnvFiles(file, workDir, home string) []string {
	if !filepath.IsAbs(file) {
		file = filepath.Join(workDir, file)
	}
	var paths []string
	if home != "" {
		paths = append(paths, filepath.Join(home, ".massgen", ".env"))
	}
	return append(paths, file, filepath.Join(workDir, ".env"))
}

// dockerFileEnv is what d's env_file passes into agent's container, as
// NAME=value (env_vars_from_file picks the names; without it every
// variable of the files goes in), and what the user should know: a name
// no file defines, a given file that does not exist, a malformed line.
// Warnings name variables and files, never values; the values are
// registered as secrets (package redact), so no log or error shows them.
func dockerFileEnv(agent string, d config.Docker, workDir, home string) (env, warnings []string) {
	if d.EnvFile == "" {
		return nil, nil
	}
	paths := dockerEnvFiles(d.EnvFile, workDir, home)
	if _, err := os.Stat(paths[len(paths)-2]); err != nil {
		warnings = append(warnings, fmt.Sprintf("agent %s: command_line_docker_credentials env_file: %s does not exist (the other files are still read: %s)",
			agent, paths[len(paths)-2], strings.Join(slices.Delete(slices.Clone(paths), len(paths)-2, len(paths)-1), ", ")))
	}
	// LoadDotEnv keeps a variable's first definition: the files go in
	// reverse, so the last of upstream's order wins.
	rev := slices.Clone(paths)
	slices.Reverse(rev)
	vars, err := config.LoadDotEnv(rev...)
	if err != nil {
		for _, e := range strings.Split(err.Error(), "\n") {
			warnings = append(warnings, fmt.Sprintf("agent %s: command_line_docker_credentials env_file: %s", agent, e))
		}
	}
	names := d.EnvFromFile
	if len(names) == 0 {
		names = slices.Sorted(maps.Keys(vars))
	}
	for _, name := range names {
		v, ok := vars[name]
		if !ok {
			warnings = append(warnings, fmt.Sprintf("agent %s: command_line_docker_credentials env_vars_from_file: %s is in none of %s, so commands do not get it",
				agent, name, strings.Join(paths, ", ")))
			continue
		}
		redact.Secret(v)
		env = append(env, name+"="+v)
	}
	return env, warnings
}
