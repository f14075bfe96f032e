package onnxrt

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// fakeRoot writes files (path relative to the root → content) under a
// temporary root.
func fakeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, s := range files {
		f := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const (
	mountsV2 = "24 1 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
	// A hybrid host: v1 controllers, with the unified hierarchy beside them.
	mountsV1 = "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" +
		"31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n" +
		"33 30 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n" +
		"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
	cgroupV1 = "4:memory:/a\n3:cpuset:/\n2:cpu,cpuacct:/a/b\n0::/\n"
)

// The default thread count is min(CPUs, ceil(quota/period)), at least 1,
// over the smallest quota on the cgroup's path, from cgroup v2's cpu.max or
// v1's cfs files; without a readable quota it is the CPU count.
func TestDefaultThreadsCgroupQuota(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		cpus  int
		want  int
	}{
		{"no cgroup files", nil, 8, 8},
		{"v2 no limit", map[string]string{"proc/self/cgroup": "0::/\n", "proc/self/mountinfo": mountsV2,
			"sys/fs/cgroup/cpu.max": "max 100000\n"}, 8, 8},
		{"v2 2 CPUs in a namespace", map[string]string{"proc/self/cgroup": "0::/\n", "proc/self/mountinfo": mountsV2,
			"sys/fs/cgroup/cpu.max": "200000 100000\n"}, 64, 2},
		{"v2 fractional rounds up", map[string]string{"proc/self/cgroup": "0::/\n", "proc/self/mountinfo": mountsV2,
			"sys/fs/cgroup/cpu.max": "150000 100000\n"}, 64, 2},
		{"v2 below one CPU", map[string]string{"proc/self/cgroup": "0::/\n", "proc/self/mountinfo": mountsV2,
			"sys/fs/cgroup/cpu.max": "20000 100000\n"}, 64, 1},
		{"v2 quota above the CPUs", map[string]string{"proc/self/cgroup": "0::/\n", "proc/self/mountinfo": mountsV2,
			"sys/fs/cgroup/cpu.max": "1600000 100000\n"}, 4, 4},
		{"v2 parent's quota is lower", map[string]string{"proc/self/cgroup": "0::/kube/pod1/c1\n",
			"proc/self/mountinfo":                mountsV2,
			"sys/fs/cgroup/kube/pod1/c1/cpu.max": "max 100000\n",
			"sys/fs/cgroup/kube/pod1/cpu.max":    "300000 100000\n",
			"sys/fs/cgroup/kube/cpu.max":         "max 100000\n"}, 16, 3},
		{"v2 mount rooted below the hierarchy", map[string]string{"proc/self/cgroup": "0::/docker/x\n",
			"proc/self/mountinfo":   "24 1 0:22 /docker/x /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
			"sys/fs/cgroup/cpu.max": "400000 100000\n"}, 16, 4},
		{"v2 garbage", map[string]string{"proc/self/cgroup": "0::/\n", "proc/self/mountinfo": mountsV2,
			"sys/fs/cgroup/cpu.max": "lots\n"}, 6, 6},
		{"v1 cfs quota", map[string]string{"proc/self/cgroup": cgroupV1, "proc/self/mountinfo": mountsV1,
			"sys/fs/cgroup/cpu,cpuacct/a/b/cpu.cfs_quota_us":  "250000\n",
			"sys/fs/cgroup/cpu,cpuacct/a/b/cpu.cfs_period_us": "100000\n",
			"sys/fs/cgroup/unified/cpu.max":                   "100000 100000\n"}, 32, 3},
		{"v1 no quota (-1)", map[string]string{"proc/self/cgroup": cgroupV1, "proc/self/mountinfo": mountsV1,
			"sys/fs/cgroup/cpu,cpuacct/a/b/cpu.cfs_quota_us":  "-1\n",
			"sys/fs/cgroup/cpu,cpuacct/a/b/cpu.cfs_period_us": "100000\n"}, 32, 32},
		{"v1 quota on an ancestor", map[string]string{"proc/self/cgroup": cgroupV1, "proc/self/mountinfo": mountsV1,
			"sys/fs/cgroup/cpu,cpuacct/a/b/cpu.cfs_quota_us":  "-1\n",
			"sys/fs/cgroup/cpu,cpuacct/a/b/cpu.cfs_period_us": "100000\n",
			"sys/fs/cgroup/cpu,cpuacct/a/cpu.cfs_quota_us":    "50000\n",
			"sys/fs/cgroup/cpu,cpuacct/a/cpu.cfs_period_us":   "50000\n"}, 32, 1},
		{"no CPUs reported", nil, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := fakeRoot(t, c.files)
			if got := defaultThreads(root, c.cpus); got != c.want {
				t.Errorf("defaultThreads = %d, want %d", got, c.want)
			}
		})
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/plain`: "/plain", `/x\04`: `/x\04`} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// On this machine the default stays within the CPUs the process may use,
// and Threads 0 resolves to it.
func TestThreadCountDefault(t *testing.T) {
	n := DefaultThreads()
	if n < 1 || n > runtime.NumCPU() {
		t.Errorf("DefaultThreads() = %d with %d CPUs", n, runtime.NumCPU())
	}
	if got := (Options{}).ThreadCount(); got != n {
		t.Errorf("ThreadCount() = %d, want %d", got, n)
	}
	if got := (Options{Threads: 3}).ThreadCount(); got != 3 {
		t.Errorf("ThreadCount() = %d, want 3", got)
	}
}

// Go's runtime reads the same quota for its GOMAXPROCS default (with a
// floor of 2): where neither the environment nor -test.cpu sets it, the
// two agree.
func TestDefaultThreadsMatchesGOMAXPROCS(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS set in the environment")
	}
	if f := flag.Lookup("test.cpu"); f != nil && f.Value.String() != "" {
		t.Skip("-test.cpu sets GOMAXPROCS")
	}
	want := max(DefaultThreads(), min(2, runtime.NumCPU()))
	if got := runtime.GOMAXPROCS(0); got != want {
		t.Errorf("GOMAXPROCS %d, DefaultThreads %d (want GOMAXPROCS = %d)", got, DefaultThreads(), want)
	}
}
