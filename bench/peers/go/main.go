// Command jwt-peer is the Go peer of the benchmark: the JwtService of
// proto/jwt.proto written the way an ordinary Go user would, with grpc-go
// (default server options) and github.com/golang-jwt/jwt/v5.
//
// Per GenerateJwt it does what the Go server of the published "JWT over gRPC,
// Node.js vs Go" comparison does: pick a subject, sign {sub, iat, exp = iat +
// 7200}, verify the token just made and check its sub. Two bugs of that server
// are fixed: this one signs with the real secret from --keys (that one read an
// unset env var, so signed with an empty HMAC key), and the subject round robin
// uses an atomic counter (a plain int is a data race under concurrent RPCs).
package main

// jwtpb/ is generated from proto/jwt.proto and committed, so building needs only
// `go build`. To regenerate (protoc 3.21+, protoc-gen-go, protoc-gen-go-grpc on PATH):
//go:generate protoc -I ../../../proto --go_out=jwtpb --go_opt=paths=source_relative --go_opt=Mjwt.proto=jwt-grpc/bench/peers/go/jwtpb --go-grpc_out=jwtpb --go-grpc_opt=paths=source_relative --go-grpc_opt=Mjwt.proto=jwt-grpc/bench/peers/go/jwtpb jwt.proto

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "jwt-grpc/bench/peers/go/jwtpb"
)

const ttl = 7200 * time.Second

var (
	errUnknownKey = errors.New("unknown kid")
	errAlgKey     = errors.New("alg does not match the key")
)

type server struct {
	pb.UnimplementedJwtServiceServer
	signers  map[string]*key // alg -> the key that signs (first listed)
	byKid    map[string]*key // kid -> key, for verifying
	parser   *jwt.Parser     // read-only after NewParser: safe to share
	subjects []string
	next     atomic.Uint64 // round-robin index into subjects
}

func newServer(keys []*key, subjects []string) *server {
	s := &server{signers: map[string]*key{}, byKid: map[string]*key{}, subjects: subjects}
	var algs []string
	for _, k := range keys {
		if _, ok := s.signers[k.alg]; !ok {
			s.signers[k.alg] = k
			algs = append(algs, k.alg)
		}
		s.byKid[k.kid] = k
	}
	s.parser = jwt.NewParser(jwt.WithValidMethods(algs), jwt.WithExpirationRequired())
	return s
}

// keyfunc picks the verification key by the header kid.
func (s *server) keyfunc(t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	k, ok := s.byKid[kid]
	if !ok {
		return nil, errUnknownKey
	}
	if k.alg != t.Method.Alg() {
		return nil, errAlgKey
	}
	return k.verify, nil
}

func (s *server) verify(token string) (*jwt.RegisteredClaims, error) {
	claims := &jwt.RegisteredClaims{}
	if _, err := s.parser.ParseWithClaims(token, claims, s.keyfunc); err != nil {
		return nil, err
	}
	return claims, nil
}

func (s *server) GenerateJwt(_ context.Context, req *pb.GenerateJwtRequest) (*pb.GenerateJwtResponse, error) {
	k, ok := s.signers[req.GetAlgorithm()]
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "algorithm %q is not configured", req.GetAlgorithm())
	}
	sub := req.GetSubject()
	if sub == "" {
		sub = s.subjects[(s.next.Add(1)-1)%uint64(len(s.subjects))]
	}
	now := time.Unix(time.Now().Unix(), 0)
	exp := now.Add(ttl)
	t := jwt.NewWithClaims(k.method, jwt.RegisteredClaims{
		Subject:   sub,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(exp),
	})
	t.Header["kid"] = k.kid
	signed, err := t.SignedString(k.sign)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "sign: %v", err)
	}
	// As every server under test does: verify what was just signed before answering it.
	claims, err := s.verify(signed)
	if err != nil || claims.Subject != sub {
		return nil, status.Errorf(codes.Internal, "self-verification failed: %v", err)
	}
	return &pb.GenerateJwtResponse{Jwt: signed, Sub: sub, Kid: k.kid, ExpiresAt: exp.Unix()}, nil
}

func (s *server) VerifyJwt(_ context.Context, req *pb.VerifyJwtRequest) (*pb.VerifyJwtResponse, error) {
	claims, err := s.verify(req.GetJwt())
	if err == nil {
		return &pb.VerifyJwtResponse{Valid: true, Sub: claims.Subject}, nil
	}
	return &pb.VerifyJwtResponse{Reason: reason(err)}, nil
}

// reason maps a golang-jwt error to the proto's Reason. Order matters: the
// keyfunc errors are wrapped in ErrTokenUnverifiable.
func reason(err error) pb.VerifyJwtResponse_Reason {
	switch {
	case errors.Is(err, errUnknownKey):
		return pb.VerifyJwtResponse_UNKNOWN_KEY
	case errors.Is(err, errAlgKey), errors.Is(err, jwt.ErrTokenUnverifiable):
		return pb.VerifyJwtResponse_ALGORITHM_NOT_ALLOWED
	case errors.Is(err, jwt.ErrTokenMalformed):
		return pb.VerifyJwtResponse_MALFORMED
	case errors.Is(err, jwt.ErrTokenExpired):
		return pb.VerifyJwtResponse_EXPIRED
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return pb.VerifyJwtResponse_NOT_YET_VALID
	default:
		return pb.VerifyJwtResponse_BAD_SIGNATURE
	}
}

func (s *server) GetJwks(context.Context, *pb.GetJwksRequest) (*pb.GetJwksResponse, error) {
	return &pb.GetJwksResponse{JwksJson: `{"keys":[]}`}, nil
}

func loadSubjects(path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var subjects []string
	if err := json.Unmarshal(raw, &subjects); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(subjects) == 0 {
		return nil, fmt.Errorf("%s: no subjects", path)
	}
	return subjects, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "jwt-peer:", err)
	os.Exit(1)
}

// callCounter counts finished unary calls by outcome: h2load sees HTTP statuses only, a
// gRPC error travels in an HTTP 200, so the benchmark's h2load cell asks the server
// (bench/load/ok-count.ts). Off unless --count-calls: two atomic adds per call.
type callCounter struct{ ok, failed atomic.Int64 }

var counter callCounter

func (c *callCounter) intercept(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if err != nil {
		c.failed.Add(1)
	} else {
		c.ok.Add(1)
	}
	return resp, err
}

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 50051, "port to listen on (0: any free port)")
	keysPath := flag.String("keys", "", "JWK Set of private keys (required)")
	subjectsPath := flag.String("subjects", "", "JSON array of subjects (required)")
	echo := flag.Bool("echo", false, "answer constants with no JWT work (grpc-go's transport ceiling); --keys and --subjects are then ignored")
	countCalls := flag.Bool("count-calls", false, "count finished calls by status; SIGUSR1 prints `calls ok=N failed=M` on stdout (the h2load cell's status check)")
	flag.CommandLine.Init(os.Args[0], flag.ContinueOnError)
	if err := flag.CommandLine.Parse(os.Args[1:]); err != nil {
		os.Exit(1) // the flag package has printed the error and usage
	}
	var service pb.JwtServiceServer = echoServer{}
	if !*echo {
		if *keysPath == "" || *subjectsPath == "" {
			fail(errors.New("--keys and --subjects are required"))
		}
		keys, err := loadKeys(*keysPath)
		if err != nil {
			fail(err)
		}
		subjects, err := loadSubjects(*subjectsPath)
		if err != nil {
			fail(err)
		}
		service = newServer(keys, subjects)
	}

	lis, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		fail(err)
	}
	var opts []grpc.ServerOption // default options on purpose
	if *countCalls {
		opts = append(opts, grpc.UnaryInterceptor(counter.intercept))
		usr1 := make(chan os.Signal, 1)
		signal.Notify(usr1, syscall.SIGUSR1)
		go func() {
			for range usr1 {
				fmt.Printf("calls ok=%d failed=%d\n", counter.ok.Load(), counter.failed.Load())
			}
		}()
	}
	gs := grpc.NewServer(opts...)
	pb.RegisterJwtServiceServer(gs, service)

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sigs
		// Graceful first; a client that keeps its streams open gets cut after 2s.
		t := time.AfterFunc(2*time.Second, gs.Stop)
		gs.GracefulStop()
		t.Stop()
	}()

	fmt.Printf("listening on %s\n", net.JoinHostPort(*host, strconv.Itoa(lis.Addr().(*net.TCPAddr).Port)))
	if err := gs.Serve(lis); err != nil {
		fail(err)
	}
}
