package par

import (
	"runtime"
	"sync"
)

// Range calls f on up to workers consecutive parts of [0, n) (workers ≤ 0:
// GOMAXPROCS), each on its own goroutine, and returns when all are done.
// With one worker, or n < 2, f(0, n) runs on the calling goroutine.
func Range(n, workers int, f func(lo, hi int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	if workers <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	part := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += part {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, min(lo+part, n))
	}
	wg.Wait()
}
