package main

import (
	"context"

	pb "jwt-grpc/bench/peers/go/jwtpb"
)

// echoServer is grpc-go's transport ceiling: JwtService answering constants, no JWT
// work, so its CPU per call is what grpc-go itself costs on this proto. It mirrors the
// grpc-js echo peer (../echo/server.ts) answer for answer.
type echoServer struct {
	pb.UnimplementedJwtServiceServer
}

// A realistic ES256-sized token (~200 characters): real header and payload, a dummy
// signature; the same bytes as the grpc-js echo peer answers.
const (
	echoSub = "alice.smith@example.com"
	echoJwt = "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6ImVjaG8tZXMyNTYifQ." +
		"eyJzdWIiOiJhbGljZS5zbWl0aEBleGFtcGxlLmNvbSIsImlhdCI6MTcwMDAwMDAwMCwiZXhwIjoxNzAwMDA3MjAwfQ." +
		"WlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWg"
)

func (echoServer) GenerateJwt(_ context.Context, req *pb.GenerateJwtRequest) (*pb.GenerateJwtResponse, error) {
	sub := req.GetSubject()
	if sub == "" {
		sub = echoSub
	}
	return &pb.GenerateJwtResponse{Jwt: echoJwt, Sub: sub, Kid: "echo-es256", ExpiresAt: 1700007200}, nil
}

func (echoServer) VerifyJwt(context.Context, *pb.VerifyJwtRequest) (*pb.VerifyJwtResponse, error) {
	return &pb.VerifyJwtResponse{Valid: true, Sub: echoSub}, nil
}

func (echoServer) GetJwks(context.Context, *pb.GetJwksRequest) (*pb.GetJwksResponse, error) {
	return &pb.GetJwksResponse{JwksJson: `{"keys":[]}`}, nil
}
