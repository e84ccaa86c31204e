// Package slurmtest starts a one-node Slurm cluster on the local machine
// for tests, from Debian's packages (munge, slurmctld, slurmd,
// slurm-client; .ci/run installs them): a MUNGE daemon with a fresh key,
// the controller and the node daemon in the foreground as child processes
// of the test, every file (key, socket, state, spool, logs) in a temporary
// folder, free loopback ports, no accounting, no cgroups
// (ProctrackType=proctrack/linuxproc, TaskPlugin=task/none) and the node
// named localhost. The daemons run as root, like the jobs; Start skips the
// test when that or the packages are missing (and fails it under CI=true,
// where .ci/run installed them). Cleanup cancels the cluster's jobs and
// stops the daemons by PID.
package slurmtest

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Cluster is a running one-node cluster.
type Cluster struct {
	// Conf is the path of its slurm.conf; Slurm's client commands find it
	// through $SLURM_CONF (see Env).
	Conf string
	dir  string
	// the daemons, in start order, and their exits
	procs   []*exec.Cmd
	waiters []chan error
	bins    map[string]string
}

// the daemons and commands the cluster needs, by Debian package
var programs = map[string]string{
	"munged": "munge", "slurmctld": "slurmctld", "slurmd": "slurmd",
	"sbatch": "slurm-client", "squeue": "slurm-client", "scancel": "slurm-client", "sinfo": "slurm-client",
}

// unavailable skips the test, or fails it under CI=true.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("slurm: %s (CI installs munge, slurmctld, slurmd and slurm-client: see .ci/run)", msg)
	}
	t.Skipf("slurm: %s", msg)
}

// lookPath finds a program in $PATH or the sbin folders a non-login
// shell's PATH may lack.
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// Start starts the cluster and registers its teardown with t.Cleanup.
func Start(t testing.TB) *Cluster {
	t.Helper()
	if runtime.GOOS != "linux" {
		unavailable(t, "needs Linux")
	}
	c := &Cluster{dir: t.TempDir(), bins: map[string]string{}}
	for name, pkg := range programs {
		p, err := lookPath(name)
		if err != nil {
			unavailable(t, "%s not found (Debian package %s)", name, pkg)
		}
		c.bins[name] = p
	}
	if os.Geteuid() != 0 {
		unavailable(t, "the daemons and jobs run as root, the test runs as uid %d", os.Geteuid())
	}
	t.Cleanup(func() { c.stop(t) })
	if err := c.start(); err != nil {
		c.logs(t)
		unavailable(t, "cannot start the cluster: %v", err)
	}
	return c
}

// Env returns the environment Slurm's client commands need to reach the
// cluster, as KEY=VALUE entries to add to os.Environ().
func (c *Cluster) Env() []string { return []string{"SLURM_CONF=" + c.Conf} }

// Command returns a client command (sbatch, squeue, …) bound to the
// cluster.
func (c *Cluster) Command(name string, args ...string) *exec.Cmd {
	p := c.bins[name]
	if p == "" {
		p = name
	}
	cmd := exec.Command(p, args...)
	cmd.Env = append(os.Environ(), c.Env()...)
	return cmd
}

// Jobs returns the ids of the jobs (array tasks one by one) that are
// pending or running, with their state: "12_3 RUNNING".
func (c *Cluster) Jobs() ([]string, error) {
	out, err := c.Command("squeue", "-h", "-o", "%i %T").Output()
	if err != nil {
		return nil, fmt.Errorf("squeue: %w", err)
	}
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(out)), " ", "=")), nil
}

// Wait polls squeue until none of the given jobs (ids as sbatch printed
// them; their array tasks count) is pending or running, or the timeout.
func (c *Cluster) Wait(timeout time.Duration, ids ...string) error {
	deadline := time.Now().Add(timeout)
	for {
		jobs, err := c.Jobs()
		if err != nil {
			return err
		}
		var left []string
		for _, j := range jobs {
			id, _, _ := strings.Cut(j, "=")
			for _, w := range ids {
				if id == w || strings.HasPrefix(id, w+"_") {
					left = append(left, j)
				}
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("jobs still queued after %v: %v", timeout, left)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// freePorts returns n distinct free TCP ports on the loopback interface.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// start writes the key and the configuration and starts the daemons.
func (c *Cluster) start() error {
	d := c.dir
	for _, sub := range []string{"munge", "run", "state", "spool", "log"} {
		if err := os.Mkdir(filepath.Join(d, sub), 0o755); err != nil {
			return err
		}
	}
	// munged wants its key readable by its user only.
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	if err := os.Chmod(filepath.Join(d, "munge"), 0o700); err != nil {
		return err
	}
	keyFile := filepath.Join(d, "munge", "munge.key")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		return err
	}
	socket := filepath.Join(d, "run", "munge.socket")
	// -f: run as root, and accept the temporary folders' permissions.
	if err := c.daemon("munged", "-F", "-f", "--key-file="+keyFile, "--socket="+socket,
		"--pid-file="+filepath.Join(d, "run", "munged.pid"), "--seed-file="+filepath.Join(d, "munge", "seed"),
		"--log-file="+filepath.Join(d, "log", "munged.log")); err != nil {
		return err
	}
	if err := waitFor(10*time.Second, func() bool { _, err := os.Stat(socket); return err == nil }); err != nil {
		return fmt.Errorf("munged made no socket: %w", err)
	}
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	c.Conf = filepath.Join(d, "slurm.conf")
	conf := fmt.Sprintf(`# A one-node test cluster (internal/slurmtest).
ClusterName=amttest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%s
StateSaveLocation=%s
SlurmdSpoolDir=%s
SlurmctldPidFile=%s
SlurmdPidFile=%s
SlurmctldLogFile=%s
SlurmdLogFile=%s
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
# A job whose dependency can no longer be met (afterok on a failed shard)
# is cancelled instead of pending forever.
DependencyParameters=kill_invalid_depend
ReturnToService=2
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=%d State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
`, ports[0], ports[1], socket, filepath.Join(d, "state"), filepath.Join(d, "spool"),
		filepath.Join(d, "run", "slurmctld.pid"), filepath.Join(d, "run", "slurmd.pid"),
		filepath.Join(d, "log", "slurmctld.log"), filepath.Join(d, "log", "slurmd.log"), runtime.NumCPU())
	if err := os.WriteFile(c.Conf, []byte(conf), 0o644); err != nil {
		return err
	}
	if err := c.daemon("slurmctld", "-D", "-i", "-f", c.Conf); err != nil {
		return err
	}
	if err := c.daemon("slurmd", "-D", "-N", "localhost", "-f", c.Conf); err != nil {
		return err
	}
	var state string
	err = waitFor(60*time.Second, func() bool {
		out, err := c.Command("sinfo", "-h", "-n", "localhost", "-o", "%t").Output()
		state = strings.TrimSpace(string(out))
		return err == nil && state == "idle"
	})
	if err != nil {
		return fmt.Errorf("the node is not idle (state %q): %w", state, err)
	}
	return nil
}

// daemon starts a daemon in the foreground, its output in log/<name>.out,
// and checks that it has not exited at once.
func (c *Cluster) daemon(name string, args ...string) error {
	out, err := os.Create(filepath.Join(c.dir, "log", name+".out"))
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.Command(c.bins[name], args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), c.Env()...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		return fmt.Errorf("%s exited at once: %v", name, err)
	case <-time.After(300 * time.Millisecond):
	}
	c.procs, c.waiters = append(c.procs, cmd), append(c.waiters, exited)
	return nil
}

// waitFor polls ok every 50 ms until it holds or the timeout.
func waitFor(timeout time.Duration, ok func() bool) error {
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v", timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// stop cancels the cluster's jobs and waits for them to leave the queue,
// then stops the daemons in reverse start order: SIGTERM, then SIGKILL
// after 10 seconds.
func (c *Cluster) stop(t testing.TB) {
	if c.Conf != "" && len(c.procs) == 3 {
		if jobs, err := c.Jobs(); err == nil && len(jobs) > 0 {
			var ids []string
			for _, j := range jobs {
				id, _, _ := strings.Cut(j, "=")
				ids = append(ids, id)
			}
			c.Command("scancel", ids...).Run()
			if err := c.Wait(30*time.Second, ids...); err != nil {
				t.Logf("slurm teardown: %v", err)
			}
		}
	}
	if t.Failed() {
		c.logs(t)
	}
	for k := len(c.procs) - 1; k >= 0; k-- {
		p := c.procs[k]
		p.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.waiters[k]:
		case <-time.After(10 * time.Second):
			p.Process.Kill()
			<-c.waiters[k]
		}
	}
	c.procs = nil
}

// logs writes the tail of every daemon log to the test log.
func (c *Cluster) logs(t testing.TB) {
	files, _ := filepath.Glob(filepath.Join(c.dir, "log", "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if len(b) > 4000 {
			b = append([]byte("…"), b[len(b)-4000:]...)
		}
		t.Logf("%s:\n%s", filepath.Base(f), b)
	}
}

// PIDs returns the processes whose command line holds every one of args,
// in order (not necessarily adjacent), from /proc.
func PIDs(args ...string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		k := 0
		for _, a := range strings.Split(string(b), "\x00") {
			if k < len(args) && a == args[k] {
				k++
			}
		}
		if k == len(args) && len(args) > 0 {
			out = append(out, pid)
		}
	}
	return out
}
