module jwt-grpc/test/discovery/go-oidc

go 1.25.0

require github.com/coreos/go-oidc/v3 v3.21.0

require (
	github.com/go-jose/go-jose/v4 v4.1.4 // indirect
	golang.org/x/oauth2 v0.36.0 // indirect
)
