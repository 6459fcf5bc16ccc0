// Package app runs a question: resolve the config, build the team
// (providers, simulator), open the logs, run the orchestration, report the
// outcome. The command line, massgen serve's runner and the public Go API
// (massgen.go) all call Execute; none of them wires providers or logs
// itself.
//
// It must not import internal/cli, internal/server or cobra: dependencies
// point cli → {server, …} → app → orchestrator. Errors that stop a run
// before it starts carry a Kind (config or execution), which each caller
// maps to its own terms (exit codes, HTTP statuses). Providers are linked
// in by importing their adapter packages (providers.go): each registers
// its backend types with the llm registry.
//
// The first-run wizards' logic is here too, without their forms (those are
// internal/cli's): setup.go keeps API keys in a 0600 .env file and checks
// them with the provider; quickstart.go lists the models to pick from and
// writes the config of a team or a use case.
package app
