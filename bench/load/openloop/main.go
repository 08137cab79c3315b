// openloop: an open-loop gRPC load generator for the benchmark (bench/load/open-loop.ts).
//
// It sends one fixed, already serialized request message on a fixed schedule (uniform or
// Poisson arrivals at --rate calls/s) over --connections HTTP/2 connections, and never
// waits for a response before sending the next call: a slow server does not lower the
// offered rate. Each call's latency is measured from its *intended* send time, so a
// queue that builds up in the server (or in this process) shows in the percentiles
// instead of being hidden (coordinated omission). ghz --rps cannot do this: its workers
// take the pacer's ticks from an unbuffered channel and call synchronously, so at most
// -c calls are in flight and a slow server delays the next ticks.
//
// Every call's gRPC status is checked; percentiles are over OK calls, exact (every
// latency is kept and sorted). The result is one JSON object on stdout.
package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// rawCodec sends the request bytes as they are and discards the response bytes: the
// generator spends no CPU on protobuf.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = data
	return nil
}
func (rawCodec) Name() string { return "proto" }

type result struct {
	// Calls whose intended send time fell inside the window.
	Sent int `json:"sent"`
	OK   int `json:"ok"`
	// gRPC code name -> count of calls that ended with it (including DeadlineExceeded for calls cut at the drain limit).
	Errors map[string]int `json:"errors"`
	// Seconds from the first intended send to the last completion.
	ElapsedS    float64 `json:"elapsedS"`
	AchievedRps float64 `json:"achievedRps"`
	OfferedRps  float64 `json:"offeredRps"`
	P50Ms       float64 `json:"p50Ms"`
	P90Ms       float64 `json:"p90Ms"`
	P99Ms       float64 `json:"p99Ms"`
	P999Ms      float64 `json:"p999Ms"`
	MaxMs       float64 `json:"maxMs"`
	// The largest delay of a send behind its intended time (this process's own lag).
	MaxSendLagMs float64 `json:"maxSendLagMs"`
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "openloop:", err)
	os.Exit(2)
}

// quantile of sorted values, linear interpolation between order statistics (R type 7),
// as bench/common/median-interval.ts quantileOfSorted.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := float64(len(sorted)-1) * q
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return sorted[lo] + (sorted[hi]-sorted[lo])*(pos-float64(lo))
}

func main() {
	target := flag.String("target", "", "host:port")
	method := flag.String("method", "/jwt.services.JwtService/GenerateJwt", "full method name")
	bodyHex := flag.String("body-hex", "", "the serialized request message, hex")
	rate := flag.Float64("rate", 0, "calls per second (> 0)")
	duration := flag.Duration("duration", 5*time.Second, "sending window")
	conns := flag.Int("connections", 4, "HTTP/2 connections, calls spread round-robin")
	arrivals := flag.String("arrivals", "poisson", "uniform | poisson")
	seed := flag.Uint64("seed", 1, "seed of the Poisson arrivals")
	drain := flag.Duration("drain", 10*time.Second, "how long calls in flight may finish after the window")
	flag.Parse()
	if *target == "" || *rate <= 0 || *conns < 1 || (*arrivals != "uniform" && *arrivals != "poisson") {
		fail(errors.New("--target, --rate > 0, --connections >= 1 and --arrivals uniform|poisson are required"))
	}
	body, err := hex.DecodeString(*bodyHex)
	if err != nil {
		fail(fmt.Errorf("--body-hex: %w", err))
	}

	clients := make([]*grpc.ClientConn, *conns)
	for i := range clients {
		cc, err := grpc.NewClient(*target, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
		if err != nil {
			fail(err)
		}
		cc.Connect()
		defer cc.Close()
		clients[i] = cc
	}
	// Connect every channel before the clock starts: one call each, not recorded. Any
	// answer proves the connection (the schedule's calls are checked one by one).
	for _, cc := range clients {
		var out []byte
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := cc.Invoke(ctx, *method, &body, &out)
		cancel()
		if c := status.Code(err); c == codes.Unavailable || c == codes.DeadlineExceeded {
			fail(fmt.Errorf("first call: %w", err))
		}
	}

	var mu sync.Mutex
	var wg sync.WaitGroup
	latencies := make([]float64, 0, int(*rate*duration.Seconds()*1.2)+16)
	codesSeen := map[string]int{}
	var lastDone time.Time
	maxLag := time.Duration(0)

	ctx, cancelAll := context.WithCancel(context.Background())
	rng := rand.New(rand.NewPCG(*seed, 0x0e2e))
	mean := float64(time.Second) / *rate
	start := time.Now().Add(5 * time.Millisecond)
	offset := 0.0
	sent := 0
	for {
		if *arrivals == "poisson" {
			offset += rng.ExpFloat64() * mean
		} else {
			offset = float64(sent) * mean
		}
		if offset >= float64(*duration) {
			break
		}
		intended := start.Add(time.Duration(offset))
		if wait := time.Until(intended); wait > 0 {
			time.Sleep(wait)
		} else if -wait > maxLag {
			maxLag = -wait
		}
		cc := clients[sent%len(clients)]
		sent++
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out []byte
			err := cc.Invoke(ctx, *method, &body, &out)
			done := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if done.After(lastDone) {
				lastDone = done
			}
			if err != nil {
				codesSeen[status.Code(err).String()]++
				return
			}
			latencies = append(latencies, float64(done.Sub(intended))/1e6)
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(*drain):
		cancelAll() // the rest end as Canceled: counted as errors
		<-finished
	}
	cancelAll()

	mu.Lock()
	defer mu.Unlock()
	sort.Float64s(latencies)
	elapsed := lastDone.Sub(start).Seconds()
	r := result{
		Sent: sent, OK: len(latencies), Errors: codesSeen, ElapsedS: elapsed, OfferedRps: *rate,
		P50Ms: quantile(latencies, 0.5), P90Ms: quantile(latencies, 0.9), P99Ms: quantile(latencies, 0.99), P999Ms: quantile(latencies, 0.999),
		MaxSendLagMs: float64(maxLag) / 1e6,
	}
	if elapsed > 0 {
		r.AchievedRps = float64(len(latencies)) / elapsed
	}
	if n := len(latencies); n > 0 {
		r.MaxMs = latencies[n-1]
	}
	if len(latencies) == 0 {
		r.P50Ms, r.P90Ms, r.P99Ms, r.P999Ms = -1, -1, -1, -1
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		fail(err)
	}
}
