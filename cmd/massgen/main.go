// Command massgen runs a team of LLM agents that refine and vote on each
// other's answers. The command line is internal/cli; what a run does is
// internal/app, which the Go library (package massgen) and the server share.
package main

import (
	"os"

	"github.com/massgen/massgen/internal/cli"
)

func main() { os.Exit(cli.Main()) }
