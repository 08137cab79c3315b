package main

// Loading the --keys file: a JWK Set of private keys, parsed by hand (base64url
// fields) into the key types golang-jwt signs and verifies with.

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"

	"github.com/golang-jwt/jwt/v5"
)

// key is one entry of the keys file, ready for golang-jwt.
type key struct {
	kid    string
	alg    string
	method jwt.SigningMethod
	sign   any // []byte, *ecdsa.PrivateKey, ed25519.PrivateKey or *rsa.PrivateKey
	verify any // []byte, *ecdsa.PublicKey, ed25519.PublicKey or *rsa.PublicKey
}

type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Crv string `json:"crv"`
	K   string `json:"k"`
	X   string `json:"x"`
	Y   string `json:"y"`
	D   string `json:"d"`
	N   string `json:"n"`
	E   string `json:"e"`
	P   string `json:"p"`
	Q   string `json:"q"`
}

// loadKeys reads the JWK Set at path. The order is kept: the first key of an
// algorithm is the one that signs.
func loadKeys(path string) ([]*key, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(set.Keys) == 0 {
		return nil, fmt.Errorf("%s: no keys", path)
	}
	keys := make([]*key, 0, len(set.Keys))
	seen := map[string]bool{}
	for i, j := range set.Keys {
		k, err := parseJWK(j)
		if err != nil {
			return nil, fmt.Errorf("%s: key %d (kid %q): %w", path, i, j.Kid, err)
		}
		if seen[k.kid] {
			return nil, fmt.Errorf("%s: duplicate kid %q", path, k.kid)
		}
		seen[k.kid] = true
		keys = append(keys, k)
	}
	return keys, nil
}

func parseJWK(j jwk) (*key, error) {
	if j.Kid == "" || j.Alg == "" {
		return nil, errors.New("kid and alg are required")
	}
	method := jwt.GetSigningMethod(j.Alg)
	if method == nil || j.Alg == "none" {
		return nil, fmt.Errorf("unsupported alg %q", j.Alg)
	}
	k := &key{kid: j.Kid, alg: j.Alg, method: method}
	var err error
	switch j.Alg {
	case "HS256", "HS384", "HS512":
		var secret []byte
		if secret, err = need("oct", j, j.K); err == nil {
			k.sign, k.verify = secret, secret
		}
	case "ES256", "ES384", "ES512":
		err = parseEC(j, k)
	case "EdDSA":
		err = parseEd25519(j, k)
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		err = parseRSA(j, k)
	default:
		err = fmt.Errorf("unsupported alg %q", j.Alg)
	}
	if err != nil {
		return nil, err
	}
	return k, nil
}

// need checks the kty and decodes one required base64url field.
func need(kty string, j jwk, field string) ([]byte, error) {
	if j.Kty != kty {
		return nil, fmt.Errorf("alg %s needs kty %s, got %q", j.Alg, kty, j.Kty)
	}
	return b64(field)
}

func b64(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("missing key field")
	}
	return base64.RawURLEncoding.DecodeString(s)
}

func parseEC(j jwk, k *key) error {
	curves := map[string]struct {
		crv   string
		curve elliptic.Curve
	}{"ES256": {"P-256", elliptic.P256()}, "ES384": {"P-384", elliptic.P384()}, "ES512": {"P-521", elliptic.P521()}}
	c := curves[j.Alg]
	if j.Crv != c.crv {
		return fmt.Errorf("alg %s needs crv %s, got %q", j.Alg, c.crv, j.Crv)
	}
	d, err := need("EC", j, j.D)
	if err != nil {
		return err
	}
	x, err := b64(j.X)
	if err != nil {
		return err
	}
	y, err := b64(j.Y)
	if err != nil {
		return err
	}
	priv, err := ecdsa.ParseRawPrivateKey(c.curve, d)
	if err != nil {
		return err
	}
	// The public point is derived from d; refuse a JWK whose x/y disagree.
	pub, err := priv.PublicKey.Bytes()
	if err != nil {
		return err
	}
	if !bytes.Equal(pub, append(append([]byte{4}, x...), y...)) {
		return errors.New("x/y do not match d")
	}
	k.sign, k.verify = priv, &priv.PublicKey
	return nil
}

func parseEd25519(j jwk, k *key) error {
	if j.Crv != "Ed25519" {
		return fmt.Errorf("alg EdDSA needs crv Ed25519, got %q", j.Crv)
	}
	seed, err := need("OKP", j, j.D)
	if err != nil {
		return err
	}
	if len(seed) != ed25519.SeedSize {
		return errors.New("bad Ed25519 d length")
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	if x, err := b64(j.X); err != nil || !bytes.Equal(x, pub) {
		return errors.New("x does not match d")
	}
	k.sign, k.verify = priv, pub
	return nil
}

func parseRSA(j jwk, k *key) error {
	var n, e, d, p, q []byte
	var err error
	for _, f := range []struct {
		dst *[]byte
		src string
	}{{&n, j.N}, {&e, j.E}, {&d, j.D}, {&p, j.P}, {&q, j.Q}} {
		if *f.dst, err = need("RSA", j, f.src); err != nil {
			return err
		}
	}
	exp := new(big.Int).SetBytes(e)
	if !exp.IsInt64() || exp.Int64() > 1<<31-1 {
		return errors.New("bad RSA e")
	}
	priv := &rsa.PrivateKey{
		PublicKey: rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(exp.Int64())},
		D:         new(big.Int).SetBytes(d),
		Primes:    []*big.Int{new(big.Int).SetBytes(p), new(big.Int).SetBytes(q)},
	}
	// dp/dq/qi are recomputed rather than trusted.
	priv.Precompute()
	if err := priv.Validate(); err != nil {
		return err
	}
	k.sign, k.verify = priv, &priv.PublicKey
	return nil
}
