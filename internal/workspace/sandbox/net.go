package sandbox

// A program with a Net (ProgramOptions.Net) lives in a network namespace
// of its own (bwrap --unshare-net: lo alone), so TCP and UDP reach
// nothing of the host: not its loopback services (other agents' workflow
// servers, databases), not the LAN, not cloud metadata, not a resolver.
// Its only ways out are the Net's endpoints. A relay in front of the
// program (this same executable, started inside the sandbox: relay.go)
// listens on 127.0.0.1 in the namespace for each endpoint and hands each
// connection it accepts to massgen over one inherited control socket:
// massgen answers every request with a fresh connected socket (SCM_RIGHTS),
// so nothing inside creates a unix socket, which the seccomp filter
// refuses. Massgen then takes the connection to the endpoint:
//
//   - an https endpoint, or one with a Key, through a reverse proxy: TLS
//     is massgen's, the program speaks plain HTTP to 127.0.0.1, and the
//     key is added by massgen in place of a stand-in, so the program (and
//     every command it runs) never holds the real key — it cannot write it
//     into the workspace or an answer, where the other agents and the logs
//     would read it. A raw TCP relay could do neither: the program would
//     need the host's name and a certificate for 127.0.0.1 to speak TLS
//     through it, and the key in hand.
//   - a plain http endpoint without a key (massgen's workflow server, an
//     MCP server of the agent's config) as raw TCP to its host and port:
//     nothing to add, so nothing to parse.

// Endpoint is a place outside the sandbox that a program with a Net may
// reach.
type Endpoint struct {
	// URL is where it is: http or https, with a path the program uses
	// below it (the provider's /v1).
	URL string
	// Key is a credential the program sends there ("": none). The program
	// gets a stand-in (Route.Key); massgen replaces it with Key in the
	// headers and query of each request.
	Key string
}

// Route is how the program inside reaches one endpoint.
type Route struct {
	// URL is the endpoint's URL inside: http://127.0.0.1:PORT and the
	// endpoint's path.
	URL string
	// Key is the stand-in to use as the endpoint's key ("" when it has
	// none).
	Key string
}
