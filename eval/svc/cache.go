package svc

import "unsafe"

// elem is the type kernel rows are stored in: float32 as LIBSVM's Qfloat,
// or float64.
type elem interface{ float32 | float64 }

// rowCache is an LRU cache of (prefixes of) kernel-matrix rows held to a
// byte budget counted in stored elements, as LIBSVM's Cache: a row i is stored
// as its first n entries, row(i)[0:n]; asking for a longer prefix extends
// the stored row, evicting least recently used rows until the budget allows.
//
// The rows are doubly linked through prev/next indices; index l is the
// list's sentinel. A row with n == 0 is not in the list.
type rowCache[T elem] struct {
	l     int
	avail int // budget still free, in elements
	heads []cacheHead[T]
	spare []T // the storage of the last evicted row, reused if large enough
	// pending column swaps (i < j), applied to the stored rows by flush;
	// deferring them lets flush walk each row once per batch.
	pending [][2]int
}

type cacheHead[T elem] struct {
	prev, next int
	data       []T // len(data) is the number of valid entries
}

// headBytes is the per-row bookkeeping charged against the budget (LIBSVM
// charges sizeof(head_t) per row).
const headBytes = 32

// newRowCache returns a cache for l rows within budgetBytes bytes. The budget
// never falls below two full rows, which the solver needs at once.
func newRowCache[T elem](l int, budgetBytes int64) *rowCache[T] {
	var zero T
	size := int64(unsafe.Sizeof(zero))
	elems := budgetBytes/size - int64(l)*headBytes/size
	if elems < 2*int64(l) {
		elems = 2 * int64(l)
	}
	const maxInt = int64(^uint(0) >> 1)
	if elems > maxInt {
		elems = maxInt
	}
	c := &rowCache[T]{l: l, avail: int(elems), heads: make([]cacheHead[T], l+1)}
	c.heads[l].prev, c.heads[l].next = l, l
	return c
}

func (c *rowCache[T]) unlink(i int) {
	h := &c.heads[i]
	c.heads[h.prev].next = h.next
	c.heads[h.next].prev = h.prev
}

// pushBack makes row i the most recently used.
func (c *rowCache[T]) pushBack(i int) {
	s := c.l
	h := &c.heads[i]
	h.next = s
	h.prev = c.heads[s].prev
	c.heads[h.prev].next = i
	c.heads[s].prev = i
}

// evict drops row i (which must be in the list) and returns its budget.
func (c *rowCache[T]) evict(i int) {
	c.unlink(i)
	h := &c.heads[i]
	c.avail += len(h.data)
	if cap(h.data) > cap(c.spare) {
		c.spare = h.data[:0]
	}
	h.data = nil
}

// get returns row i with at least length entries allocated, and the number
// start of leading entries that were already valid; the caller fills
// row[start:length]. When start ≥ length nothing needs computing. The
// returned slice stays valid until the next call that may evict (get or
// swap); the two most recently requested rows are never evicted by get.
func (c *rowCache[T]) get(i, length int) (row []T, start int) {
	c.flush()
	h := &c.heads[i]
	have := len(h.data)
	if have > 0 {
		c.unlink(i)
	}
	if more := length - have; more > 0 {
		for c.avail < more {
			c.evict(c.heads[c.l].next)
		}
		h = &c.heads[i]
		if cap(h.data) >= length {
			h.data = h.data[:length]
		} else {
			var nd []T
			if cap(c.spare) >= length {
				nd = c.spare[:length]
				c.spare = nil
			} else {
				nd = make([]T, length)
			}
			copy(nd, h.data)
			if cap(h.data) > cap(c.spare) {
				c.spare = h.data[:0]
			}
			h.data = nd
		}
		c.avail -= more
		c.pushBack(i)
		return h.data, have
	}
	c.pushBack(i)
	return h.data, length
}

// swap exchanges indices i and j: the stored rows trade places and, inside
// every stored row, entries i and j are exchanged; a row that holds one of
// the two entries but not the other is dropped. The in-row exchanges are
// queued and done by the next flush (or get).
func (c *rowCache[T]) swap(i, j int) {
	if i == j {
		return
	}
	if i > j {
		i, j = j, i
	}
	hi, hj := &c.heads[i], &c.heads[j]
	if len(hi.data) > 0 {
		c.unlink(i)
	}
	if len(hj.data) > 0 {
		c.unlink(j)
	}
	hi.data, hj.data = hj.data, hi.data
	if len(hi.data) > 0 {
		c.pushBack(i)
	}
	if len(hj.data) > 0 {
		c.pushBack(j)
	}
	c.pending = append(c.pending, [2]int{i, j})
}

// flush applies the queued column swaps to every stored row, in order; a
// row is dropped at the first swap that straddles its length.
func (c *rowCache[T]) flush() {
	if len(c.pending) == 0 {
		return
	}
	for k := c.heads[c.l].next; k != c.l; {
		next := c.heads[k].next
		d := c.heads[k].data
		n := len(d)
		for _, p := range c.pending {
			if n > p[0] {
				if n <= p[1] {
					c.evict(k)
					break
				}
				d[p[0]], d[p[1]] = d[p[1]], d[p[0]]
			}
		}
		k = next
	}
	c.pending = c.pending[:0]
}
