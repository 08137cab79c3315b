package main

import (
	"math"
	"testing"
)

// The percentiles must be those of bench/common/median-interval.ts quantileOfSorted (R's
// type 7), so that the generator's p99 and the harness's own quantiles agree.
func TestQuantileInterpolatesBetweenOrderStatistics(t *testing.T) {
	sorted := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	cases := []struct{ q, want float64 }{{0, 1}, {0.5, 5.5}, {0.9, 9.1}, {0.99, 9.91}, {0.999, 9.991}, {1, 10}}
	for _, c := range cases {
		if got := quantile(sorted, c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := quantile([]float64{42}, 0.99); got != 42 {
		t.Errorf("one value: %v", got)
	}
	if !math.IsNaN(quantile(nil, 0.5)) {
		t.Error("no value: want NaN")
	}
}
