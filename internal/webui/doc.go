// Package webui is massgen's Web UI: a page that shows a run live (one
// card per agent, answers, votes, restarts, the timeline, the winner and
// its final answer), starts and cancels runs, asks follow-ups in the same
// session, reopens past runs as a replay of their events and browses their
// log directories read-only.
//
// It is an http.Handler mounted under a prefix (/ui): `massgen --web`
// serves it alone on 127.0.0.1, `massgen serve` beside its API. The page
// is a static bundle embedded in the binary (static/, plain JavaScript
// modules and CSS with no build step, see docs/webui.md for why); its data
// comes from the JSON and Server-Sent Events routes of api.go, in the one
// event schema (docs/events.md).
//
// Safety: every /api/ route needs Deps.Token as a bearer token when it is
// set (massgen --web makes one per launch and puts it in the fragment of
// the URL it opens; massgen serve uses its --api-key), refuses requests a
// cross-origin page sends (Origin and Sec-Fetch-Site) and, when
// Deps.AllowHost is set, requests addressed to a name the server does not
// answer to (DNS rebinding). The static files hold nothing secret and are
// served to any allowed Host.
//
// Runs are turns of sessions (app.Session): the sessions database and the
// log directories are the ones the command line uses, so a run started
// here is listed by `massgen logs` and `massgen sessions`, and the other
// way round. This package imports app and below, never cli or server.
package webui
