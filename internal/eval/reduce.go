package eval

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// Reducers turn the scores of an item's epochs into the item's score.
var Reducers = map[string]func([]float64) float64{
	"mean": mean,
	"max":  func(xs []float64) float64 { return slices.Max(xs) },
	"min":  func(xs []float64) float64 { return slices.Min(xs) },
	"median": func(xs []float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return Quantile(s, 0.5)
	},
	// mode: the most frequent score, the higher one on a tie (majority
	// vote over epochs for right/wrong scores).
	"mode": func(xs []float64) float64 {
		count := map[float64]int{}
		best, n := math.Inf(-1), 0
		for _, x := range xs {
			count[x]++
		}
		for _, x := range slices.Sorted(maps.Keys(count)) {
			if count[x] >= n {
				best, n = x, count[x]
			}
		}
		return best
	},
}

// Reduce applies the named reducer.
func Reduce(name string, xs []float64) (float64, error) {
	f, ok := Reducers[name]
	if !ok {
		return 0, fmt.Errorf("unknown reducer %q: want one of %v", name, slices.Sorted(maps.Keys(Reducers)))
	}
	if len(xs) == 0 {
		return 0, nil
	}
	return f(xs), nil
}
