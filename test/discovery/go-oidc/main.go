// Verifies ID tokens the way Kubernetes' OIDC authenticator does: coreos/go-oidc v3 discovers
// the issuer (ISSUER/.well-known/openid-configuration), then checks each token against the
// JWK Set at its jwks_uri, with the algorithms the document lists.
//
// Usage: go-oidc-verify ISSUER < tokens (one per line). Prints one line per token:
// "ok SUBJECT" or "fail REASON". Exits 1 when discovery itself fails.
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go-oidc-verify ISSUER < tokens")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	provider, err := oidc.NewProvider(ctx, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "discovery:", err)
		os.Exit(1)
	}
	// No audience here: jwt-grpc's tokens name their own (or none).
	verifier := provider.Verifier(&oidc.Config{SkipClientIDCheck: true})
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 64*1024), 1<<20)
	for scanner.Scan() {
		raw := strings.TrimSpace(scanner.Text())
		if raw == "" {
			continue
		}
		token, err := verifier.Verify(ctx, raw)
		if err != nil {
			fmt.Println("fail", strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		fmt.Println("ok", token.Subject)
	}
}
