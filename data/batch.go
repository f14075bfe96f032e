package data

import "math/rand/v2"

// MaxBatchSize bounds a batch size setting; batches are also never larger
// than the examples they hold, so memory follows the data, not the setting.
const MaxBatchSize = 1 << 20

// Batches partitions 0..n-1 into consecutive batches of batchSize indices;
// the last batch holds the remainder and may be smaller (it is kept, not
// dropped). With shuffle, the indices are first permuted by rng.Perm(n), so a
// seeded rng gives the same batches every time; shuffle with a nil rng uses a
// fixed seed (0, 0). batchSize < 1 puts everything in one batch; n < 1 gives
// no batches. The batches share one backing array.
func Batches(n, batchSize int, shuffle bool, rng *rand.Rand) [][]int {
	if n < 1 {
		return nil
	}
	if batchSize < 1 || batchSize > n {
		batchSize = n
	}
	var order []int
	if shuffle {
		if rng == nil {
			rng = rand.New(rand.NewPCG(0, 0))
		}
		order = rng.Perm(n)
	} else {
		order = Range(n)
	}
	out := make([][]int, 0, (n+batchSize-1)/batchSize)
	for lo := 0; lo < n; lo += batchSize {
		hi := min(lo+batchSize, n)
		out = append(out, order[lo:hi:hi])
	}
	return out
}
