package kit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userHZ is the unit of /proc/PID/stat's CPU times: USER_HZ, 100 on every
// Linux architecture weft runs on.
const userHZ = 100

// CPU is the CPU time (user and system) the parts of a benchmark have used
// so far: this process, one child, and the Postgres server's processes when
// it runs on this machine (zero when none is found).
type CPU struct {
	Self, Child, Postgres time.Duration
	// backends is each Postgres process's time, so that a difference
	// counts only what the processes did between two samples: a
	// connection that closed meanwhile takes its whole past with it.
	backends map[int]time.Duration
}

// SampleCPU reads the CPU times of this process, of the process child (0:
// none) and of every process named postgres.
func SampleCPU(child int) (CPU, error) {
	self, err := cpuOf("/proc/self/stat")
	if err != nil {
		return CPU{}, err
	}
	c := CPU{Self: self, backends: map[int]time.Duration{}}
	if child > 0 {
		if c.Child, err = cpuOf(fmt.Sprintf("/proc/%d/stat", child)); err != nil {
			return CPU{}, err
		}
	}
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return CPU{}, err
	}
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(b), " (postgres) ") {
			continue // gone meanwhile, or not Postgres
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if err != nil {
			continue
		}
		if d, err := parseStatCPU(string(b)); err == nil {
			c.Postgres += d
			c.backends[pid] = d
		}
	}
	return c, nil
}

// Sub is c less an earlier sample. Postgres's part counts the processes
// of the later sample: their time since the earlier one, or all of it for
// those started since. Processes that exited in between are missing, so
// the figure errs low by what they did in it.
func (c CPU) Sub(earlier CPU) CPU {
	var pg time.Duration
	for pid, d := range c.backends {
		pg += d - earlier.backends[pid]
	}
	return CPU{Self: c.Self - earlier.Self, Child: c.Child - earlier.Child, Postgres: pg}
}

// Per is c divided over n operations.
func (c CPU) Per(n int) CPU {
	n = max(n, 1)
	return CPU{Self: c.Self / time.Duration(n), Child: c.Child / time.Duration(n), Postgres: c.Postgres / time.Duration(n)}
}

// Total is the three parts' sum.
func (c CPU) Total() time.Duration { return c.Self + c.Child + c.Postgres }

func cpuOf(path string) (time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("cpu: %w", err)
	}
	return parseStatCPU(string(b))
}

// parseStatCPU takes utime and stime (fields 14 and 15) from a
// /proc/PID/stat line; the command name, field 2, may hold spaces, so the
// fields are counted from its closing parenthesis.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("cpu: malformed stat %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("cpu: short stat %q", stat)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cpu: malformed stat %q", stat)
	}
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}

// Sched is a process's scheduler account (/proc/PID/task/*/schedstat):
// time on a CPU, and time runnable but waiting for one. On a shared
// machine the wait is what other tenants take from it.
type Sched struct{ ran, waited time.Duration }

// SampleSched reads the scheduler account of process pid.
func SampleSched(pid int) (Sched, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil {
		return Sched{}, err
	}
	var c Sched
	for _, path := range tasks {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // a thread that exited
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		ran, _ := strconv.ParseInt(f[0], 10, 64)
		waited, _ := strconv.ParseInt(f[1], 10, 64)
		c.ran += time.Duration(ran)
		c.waited += time.Duration(waited)
	}
	return c, nil
}

// Since is the account between two readings, per second of wall time d.
func (c Sched) Since(before Sched, d time.Duration) string {
	s := d.Seconds()
	return fmt.Sprintf("on a CPU %.2f s/s, runnable but waiting for one %.2f s/s",
		(c.ran-before.ran).Seconds()/s, (c.waited-before.waited).Seconds()/s)
}

// LoadAvg is the machine's load average, as uptime prints it.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

// SelfCPU is this process's CPU time so far, user and system, from
// getrusage: finer than /proc's ticks, for a figure per request.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
