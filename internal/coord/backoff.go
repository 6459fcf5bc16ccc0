package coord

import (
	"encoding/binary"
	"hash/fnv"
	"time"
)

// MaxCircuitWaits bounds the failures an open circuit breaker may cause an
// agent without spending its failure budget. Such a failure says nothing
// about the agent (the request was never sent), so it waits instead; but a
// breaker that never closes must not keep an agent in the run forever, so
// past this many waits in a row each further one counts. With the default
// backoff the waits span about two minutes, several breaker periods. The
// run deadline bounds everything in any case.
const MaxCircuitWaits = 8

// backoff is how long an agent's next turn waits after failed turns in a
// row: RetryBackoff, doubled per further failure, capped at
// RetryBackoffMax, plus up to a quarter as jitter. Without it a turn cut
// mid-stream restarts at once, and three cuts in a fraction of a second
// remove a healthy agent whose provider had a moment's trouble.
//
// The jitter is a hash of the agent and the turn, not a random number: the
// machine stays pure, a replay gets the same delays, and agents that fail
// together (one provider outage) still retry apart.
func (m *Machine) backoff(a *agent) time.Duration {
	n := a.failures + a.circuitWaits
	if n == 0 {
		return 0
	}
	d, ceiling := m.cfg.RetryBackoff, m.cfg.RetryBackoffMax
	for i := 1; i < n && d < ceiling; i++ {
		d *= 2
	}
	d = min(d, ceiling)
	h := fnv.New64a()
	h.Write([]byte(a.id))
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(m.turns)))
	frac := float64(h.Sum64()>>11) / (1 << 53) // in [0, 1)
	return min(d+time.Duration(frac*float64(d/4)), ceiling).Round(time.Millisecond)
}
