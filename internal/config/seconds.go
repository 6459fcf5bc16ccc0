package config

import (
	"fmt"
	"math"
	"time"
)

// MaxSeconds is the largest value a seconds-valued key or flag takes: one
// year. A time.Duration holds about 292 years, and a value past that wraps
// around (1e10 seconds became a deadline in the past: the run ended at
// once). A year keeps every sum a run makes of its limits (a deadline plus
// its presentation grace plus a turn's backoff) far from that edge, and is
// longer than any run or call needs to be.
const MaxSeconds = 365 * 24 * 60 * 60

// secondsProblem says what is wrong with secs as a number of seconds, or
// "" when it is a finite value in (0, MaxSeconds] (or 0 when zeroOK).
// NaN and the infinities are refused: NaN compares false with every bound,
// so it would pass for "no limit" or "the default" depending on the test
// that meets it.
func secondsProblem(secs float64, zeroOK bool) string {
	switch {
	case math.IsNaN(secs) || math.IsInf(secs, 0):
		return fmt.Sprintf("must be a finite number of seconds, got %g", secs)
	case secs < 0 || secs == 0 && !zeroOK:
		return fmt.Sprintf("must be a positive number of seconds, got %g", secs)
	case secs > MaxSeconds:
		return fmt.Sprintf("must be at most %d seconds (a year), got %g", MaxSeconds, secs)
	}
	return ""
}

// secondsHint is the suggestion that goes with a secondsProblem.
func secondsHint(example string) string {
	return fmt.Sprintf("use a number of seconds between 0 and %d, e.g. %s", MaxSeconds, example)
}

// Seconds converts a seconds value given by a flag or a request (name says
// which, as the user wrote it) into a Duration: a finite positive number
// of at most MaxSeconds. A value too small to be a nanosecond becomes one,
// never 0, which means "the default" to most limits.
func Seconds(name string, secs float64) (time.Duration, error) {
	if p := secondsProblem(secs, false); p != "" {
		return 0, fmt.Errorf("%s %s", name, p)
	}
	return toDuration(secs), nil
}

// toDuration converts a value secondsProblem accepted.
func toDuration(secs float64) time.Duration {
	d := time.Duration(secs * float64(time.Second))
	if d == 0 && secs > 0 {
		d = 1
	}
	return d
}

// seconds reads a seconds-valued key: a number (the decoder's type error
// otherwise) that secondsProblem accepts, else an error at its value that
// names the key and suggests a value like example. ok is false when the
// key is absent or wrong.
func (d *decoder) seconds(key string, p *pair, example string) (float64, bool) {
	v, ok := d.number(key, p, wantSeconds)
	if !ok {
		return 0, false
	}
	if prob := secondsProblem(v, false); prob != "" {
		d.fail(p.val.pos, key, prob, secondsHint(example))
		return 0, false
	}
	return v, true
}
