package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/stablepay/payout-operator/internal/admin"
	"github.com/stablepay/payout-operator/internal/sharedlimits"
	"github.com/stablepay/payout-operator/test/testredis"
)

// startFacadeProcess runs the payoutd binary as a facade replica (no controllers) sharing its
// limits in the Redis at redisAddr, until the spec ends, and returns its base URL.
func startFacadeProcess(bin, kubeconfig, redisAddr, logDir, name string) string {
	GinkgoHelper()
	addr := freeAddr()
	logPath := filepath.Join(logDir, name+".log")
	log, err := os.Create(logPath)
	Expect(err).NotTo(HaveOccurred())
	args := append([]string{"--kubeconfig", kubeconfig, "--controllers=false", "--" + sharedlimits.FlagAddr, redisAddr}, payoutdArgs(addr)...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	Expect(cmd.Start()).To(Succeed())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(exited) }()
	DeferCleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if CurrentSpecReport().Failed() {
			out, _ := os.ReadFile(logPath)
			GinkgoWriter.Printf("--- %s's log:\n%s\n", name, out)
		}
	})
	url := "http://" + addr
	Eventually(func() error {
		select {
		case <-exited:
			return StopTrying(name + " exited; its log: " + logPath)
		default:
		}
		return ping(url)
	}).Should(Succeed())
	return url
}

// fromAddress is an HTTP client whose requests come from the given loopback address: the limits
// of spec 5.3 are per address, and each part of the test needs one of its own.
func fromAddress(ip net.IP) *http.Client {
	src := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: src.DialContext}}
}

// answer is what the test reads of a response.
type answer struct {
	status                  int
	limit, remaining, reset string
}

func get(hc *http.Client, url, path, key string) answer {
	GinkgoHelper()
	req, err := http.NewRequest("GET", url+path, nil)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	return answer{resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"), resp.Header.Get("X-RateLimit-Remaining"), resp.Header.Get("X-RateLimit-Reset")}
}

// Spec 8.1 and 5.3 across replicas (issue 17): two payoutd processes serving the facade against
// one API server, sharing one real Redis. Every count is exact.
var _ = Describe("limits shared by two facade processes through Redis", Ordered, func() {
	var replicas [2]string
	var redisSrv *testredis.Server
	var key string

	BeforeAll(func() {
		redisSrv = testredis.StartForTest(GinkgoT())
		bin, kubeconfig := payoutdBinary("payoutd-limits")
		logDir := GinkgoT().TempDir()
		for i := range replicas {
			replicas[i] = startFacadeProcess(bin, kubeconfig, redisSrv.Addr(), logDir, fmt.Sprintf("facade-%d", i))
		}
		_, err := admin.CreateAccount(context.Background(), env.Client, "shared-limits", admin.DefaultAccountSettings("shared-limits"))
		Expect(err).NotTo(HaveOccurred())
		key = issueKey("shared-limits")
		// Wait until both replicas know the key, from an address of its own: the 401s of a key
		// a replica's cache has not seen yet count as bad credentials of their address, on
		// both replicas now.
		waiter := fromAddress(net.IPv4(127, 89, 0, 1))
		for _, url := range replicas {
			Eventually(func() int { return get(waiter, url, "/api/payouts/amount-limits", key).status }).
				WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Equal(200))
		}
	})

	It("gives exactly one 429 to 21 quote requests of one key spread over both replicas within a minute", func() {
		hc := fromAddress(net.IPv4(127, 89, 0, 2))
		start := time.Now()
		var answers []answer
		for i := range 21 {
			answers = append(answers, get(hc, replicas[i%2], "/api/payouts/quote?targetCurrency=EUR&sourceAmount=100", key))
		}
		Expect(time.Since(start)).To(BeNumerically("<", 50*time.Second), "the 21 requests must fall in one window")

		var ok, limited int
		for i, a := range answers {
			switch a.status {
			case 200:
				ok++
			case 429:
				limited++
			default:
				Fail(fmt.Sprintf("request %d: status %d", i+1, a.status))
			}
			// one count for both replicas: Remaining falls by one per request whichever
			// replica answers, and all agree on the window's end
			Expect(a.limit).To(Equal("20"), "request %d", i+1)
			Expect(a.remaining).To(Equal(strconv.Itoa(max(19-i, 0))), "request %d (replica %d)", i+1, i%2)
			first, _ := strconv.ParseInt(answers[0].reset, 10, 64)
			this, err := strconv.ParseInt(a.reset, 10, 64)
			Expect(err).NotTo(HaveOccurred(), "request %d: X-RateLimit-Reset %q", i+1, a.reset)
			Expect(this).To(BeNumerically("~", first, 1), "request %d: X-RateLimit-Reset", i+1)
			Expect(this).To(BeNumerically(">", start.Unix()), "request %d: X-RateLimit-Reset", i+1)
		}
		Expect(ok).To(Equal(20))
		Expect(limited).To(Equal(1))
		Expect(answers[20].status).To(Equal(429), "the 21st is the one refused")

		// the count is in Redis, under the configured prefix
		rc := redisSrv.Client()
		defer rc.Close()
		keys, err := rc.Keys(context.Background(), sharedlimits.DefaultKeyPrefix+"rate*").Result()
		Expect(err).NotTo(HaveOccurred())
		Expect(keys).NotTo(BeEmpty())
	})

	// The sixth bad credential of an address is refused whichever replica sees it: once with
	// the sixth on replica 1 (odd requests on 0, even on 1), once on replica 0 (the other way
	// round), each from an address of its own.
	for _, c := range []struct {
		ip    byte
		first int // the replica of the first request; they alternate
	}{{3, 0}, {4, 1}} {
		sixth := (c.first + 5) % 2
		It(fmt.Sprintf("refuses the sixth bad credential of an address on replica %d, and then the address on both", sixth), func() {
			hc := fromAddress(net.IPv4(127, 89, 0, c.ip))
			// the valid key with its last character changed: well-formed, and it does not match
			bad := key[:len(key)-1] + "a"
			if bad == key {
				bad = key[:len(key)-1] + "b"
			}
			var statuses []int
			for i := range 6 {
				statuses = append(statuses, get(hc, replicas[(c.first+i)%2], "/api/payouts/amount-limits", bad).status)
			}
			Expect(statuses).To(Equal([]int{401, 401, 401, 401, 401, 429}))
			// the address is blocked on both replicas, even with a valid key
			for r, url := range replicas {
				Expect(get(hc, url, "/api/payouts/amount-limits", key).status).To(Equal(429), "replica %d", r)
			}
			// another address with the same valid key is not
			other := fromAddress(net.IPv4(127, 89, 1, c.ip))
			for r, url := range replicas {
				Expect(get(other, url, "/api/payouts/amount-limits", key).status).To(Equal(200), "replica %d", r)
			}
		})
	}
})
