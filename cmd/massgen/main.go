// Command massgen runs a team of LLM agents that refine and vote on each
// other's answers. All behaviour lives in internal/cli.
package main

import (
	"os"

	"github.com/massgen/massgen/internal/cli"
)

func main() { os.Exit(cli.Main()) }
