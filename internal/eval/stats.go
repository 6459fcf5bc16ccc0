package eval

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Bootstrap is how intervals are computed: Resamples draws of the items
// with replacement, from a generator seeded with Seed, and the central
// Confidence share of the resampled means (percentile interval).
type Bootstrap struct {
	Resamples  int     `json:"resamples"`
	Seed       uint64  `json:"seed"`
	Confidence float64 `json:"confidence"`
}

// DefaultBootstrap: 2000 resamples, 95%.
var DefaultBootstrap = Bootstrap{Resamples: 2000, Seed: 1, Confidence: 0.95}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// MeanCI is the mean of xs and its bootstrap interval. The same seed and
// data give the same interval.
func (b Bootstrap) MeanCI(xs []float64) (m, lo, hi float64) {
	m = mean(xs)
	n := len(xs)
	if n < 2 || b.Resamples < 1 {
		return m, m, m
	}
	rng := rand.New(rand.NewPCG(b.Seed, 0x6d617373))
	means := make([]float64, b.Resamples)
	for r := range means {
		s := 0.0
		for range n {
			s += xs[rng.IntN(n)]
		}
		means[r] = s / float64(n)
	}
	lo, hi = percentileInterval(means, b.Confidence)
	return m, lo, hi
}

// PairedCI is the mean difference a−b over paired observations and its
// bootstrap interval: the items are resampled, each keeping its pair, so
// that what the two systems share (an item hard for both) cancels.
func (b Bootstrap) PairedCI(a, bs []float64) (d, lo, hi float64) {
	diff := make([]float64, len(a))
	for i := range a {
		diff[i] = a[i] - bs[i]
	}
	return b.MeanCI(diff)
}

func percentileInterval(xs []float64, conf float64) (lo, hi float64) {
	slices.Sort(xs)
	alpha := (1 - conf) / 2
	return Quantile(xs, alpha), Quantile(xs, 1-alpha)
}

// Quantile of sorted xs (linear interpolation between closest ranks).
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	return sorted[i] + f*(sorted[i+1]-sorted[i])
}
