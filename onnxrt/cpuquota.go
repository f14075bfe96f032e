package onnxrt

import (
	"bufio"
	"math"
	"os"
	"path"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
)

// DefaultThreads is the intra-op thread count of Threads 0: the CPUs this
// process may run on (runtime.NumCPU, which on Linux counts the affinity
// mask), lowered to the CPU quota of its cgroup when one is set, as Go's
// own GOMAXPROCS default does since Go 1.25. A container limited to 2 CPUs
// on a 64-core host gets 2 threads, not 64 threads that the quota throttles.
// Unlike GOMAXPROCS, which keeps at least 2 so that the garbage collector
// runs beside the program, a quota under one CPU gives 1 thread: more
// intra-op threads would only take turns. The files are read once per
// process.
var DefaultThreads = sync.OnceValue(func() int { return defaultThreads("/", goruntime.NumCPU()) })

// defaultThreads is DefaultThreads with the file system root (holding
// proc/self/cgroup, proc/self/mountinfo and the cgroup mounts) and the
// CPU count as parameters, for tests.
func defaultThreads(root string, cpus int) int {
	n := max(cpus, 1)
	if q, ok := cgroupCPULimit(root); ok {
		n = min(n, max(1, int(math.Ceil(q))))
	}
	return n
}

// cgroupCPULimit returns the CPU quota, in CPUs (quota/period), of the
// process's cgroup under root: the smallest one set on its cgroup or any
// ancestor visible in the mount. It reads cgroup v2's cpu.max and, when
// the cpu controller is on a v1 hierarchy instead, cpu.cfs_quota_us and
// cpu.cfs_period_us. ok is false when no quota is set or the files cannot
// be read (another OS, no cgroup file system): then there is no limit.
func cgroupCPULimit(root string) (cpus float64, ok bool) {
	mount, rel, v2, found := cpuCgroupDir(root)
	if !found {
		return 0, false
	}
	best := math.Inf(1)
	// From the process's cgroup up to the mount's root: a parent's quota
	// bounds its children.
	for dir := rel; ; dir = path.Dir(dir) {
		d := filepath.Join(root, mount, filepath.FromSlash(dir))
		var q float64
		var set bool
		if v2 {
			q, set = readCPUMax(filepath.Join(d, "cpu.max"))
		} else {
			q, set = readCFS(filepath.Join(d, "cpu.cfs_quota_us"), filepath.Join(d, "cpu.cfs_period_us"))
		}
		if set {
			best = min(best, q)
		}
		if dir == "/" || dir == "." {
			break
		}
	}
	return best, !math.IsInf(best, 1)
}

// cpuCgroupDir finds where the process's cpu cgroup lies: the mount point
// of the hierarchy that holds the cpu controller (cgroup v1 "cpu", else
// the v2 unified hierarchy) and the cgroup's path relative to that
// mount's root (/proc/self/cgroup gives it relative to the hierarchy's
// root; a container's mount may start below it).
func cpuCgroupDir(root string) (mount, rel string, v2, ok bool) {
	f, err := os.Open(filepath.Join(root, "proc", "self", "cgroup"))
	if err != nil {
		return "", "", false, false
	}
	defer f.Close()
	var v1Path, v2Path string
	var hasV1, hasV2 bool
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		id, rest, ok1 := strings.Cut(sc.Text(), ":")
		ctrls, p, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 {
			continue
		}
		switch {
		case id == "0" && ctrls == "":
			v2Path, hasV2 = p, true
		case hasController(ctrls, "cpu"):
			v1Path, hasV1 = p, true
		}
	}
	// The v1 cpu controller, where there is one, is the one that applies:
	// a controller is on one hierarchy at a time.
	if hasV1 {
		if m, r, found := findMount(root, false, v1Path); found {
			return m, r, false, true
		}
	}
	if hasV2 {
		if m, r, found := findMount(root, true, v2Path); found {
			return m, r, true, true
		}
	}
	return "", "", false, false
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// findMount reads proc/self/mountinfo for the cgroup2 mount (v2) or the
// cgroup mount with the cpu option, and returns its mount point and the
// cgroup path p relative to the mount's root. A mount whose root is not
// an ancestor of p does not show the process's cgroup and is skipped.
func findMount(root string, v2 bool, p string) (mount, rel string, ok bool) {
	f, err := os.Open(filepath.Join(root, "proc", "self", "mountinfo"))
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID parent major:minor root mount-point options [optional...] - fstype source super-options
		pre, post, found := strings.Cut(sc.Text(), " - ")
		if !found {
			continue
		}
		a, b := strings.Fields(pre), strings.Fields(post)
		if len(a) < 5 || len(b) < 3 {
			continue
		}
		switch {
		case v2 && b[0] == "cgroup2":
		case !v2 && b[0] == "cgroup" && hasController(b[2], "cpu"):
		default:
			continue
		}
		mroot := unescapeMount(a[3])
		r, within := relTo(mroot, p)
		if !within {
			continue
		}
		return unescapeMount(a[4]), r, true
	}
	return "", "", false
}

// relTo returns p relative to the mount root mroot as an absolute path
// ("/" for p == mroot), and whether p lies within mroot.
func relTo(mroot, p string) (string, bool) {
	mroot, p = path.Clean(mroot), path.Clean(p)
	if mroot == "/" {
		return p, true
	}
	if p == mroot {
		return "/", true
	}
	if rest, ok := strings.CutPrefix(p, mroot+"/"); ok {
		return "/" + rest, true
	}
	return "", false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readCPUMax reads cgroup v2's cpu.max, "$MAX $PERIOD" with "max" for no
// limit.
func readCPUMax(file string) (float64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "max" {
		return 0, false
	}
	return quotaOver(f[0], f[1])
}

// readCFS reads cgroup v1's cpu.cfs_quota_us (-1: no limit) and
// cpu.cfs_period_us.
func readCFS(quotaFile, periodFile string) (float64, bool) {
	q, err := os.ReadFile(quotaFile)
	if err != nil {
		return 0, false
	}
	p, err := os.ReadFile(periodFile)
	if err != nil {
		return 0, false
	}
	return quotaOver(strings.TrimSpace(string(q)), strings.TrimSpace(string(p)))
}

// quotaOver returns quota/period for positive integers; anything else
// (-1, garbage) is no limit.
func quotaOver(quota, period string) (float64, bool) {
	q, err1 := strconv.ParseInt(quota, 10, 64)
	p, err2 := strconv.ParseInt(period, 10, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, false
	}
	return float64(q) / float64(p), true
}
