// Command connect-go-client calls JwtService with connect-go's client (connectrpc.com/connect),
// written elsewhere, for test/transport/connect-clients.integration.test.ts: the messages come
// from the build's descriptor set (no generated code), the calls from stdin, one JSON array of
// {"method", "request" (proto3 JSON), "headers"}; it prints one JSON array of answers,
// {"response" (proto3 JSON)} or {"code", "message"} (gRPC's code numbers, which connect-go keeps).
//
// Usage: connect-go-client -url http://127.0.0.1:PORT -protocol connect|grpc|grpcweb -http 1|2 -descriptors FILE
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

const service = "jwt.services.JwtService"

type call struct {
	Method  string            `json:"method"`
	Request json.RawMessage   `json:"request"`
	Headers map[string]string `json:"headers"`
}

type answer struct {
	Response json.RawMessage `json:"response,omitempty"`
	Code     *int            `json:"code,omitempty"`
	Message  string          `json:"message,omitempty"`
}

func main() {
	url := flag.String("url", "", "the server's base URL")
	protocol := flag.String("protocol", "connect", "connect, grpc or grpcweb")
	httpVersion := flag.String("http", "2", "1 (HTTP/1.1) or 2 (HTTP/2 without TLS, prior knowledge)")
	descriptors := flag.String("descriptors", "", "the FileDescriptorSet holding JwtService")
	flag.Parse()
	methods, err := loadService(*descriptors)
	if err != nil {
		fail(err)
	}
	var calls []call
	if err := json.NewDecoder(os.Stdin).Decode(&calls); err != nil {
		fail(fmt.Errorf("stdin: %w", err))
	}
	httpClient := &http.Client{Transport: transport(*httpVersion), Timeout: 20 * time.Second}
	answers := make([]answer, 0, len(calls))
	for _, c := range calls {
		method := methods.ByName(protoreflect.Name(c.Method))
		if method == nil {
			fail(fmt.Errorf("%s has no method %s", service, c.Method))
		}
		answers = append(answers, invoke(httpClient, *url, *protocol, method, c))
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		fail(err)
	}
}

// loadService finds JwtService's methods in the descriptor set.
func loadService(path string) (protoreflect.MethodDescriptors, error) {
	bytes, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(bytes, &set); err != nil {
		return nil, err
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, err
	}
	found, err := files.FindDescriptorByName(service)
	if err != nil {
		return nil, err
	}
	return found.(protoreflect.ServiceDescriptor).Methods(), nil
}

// transport speaks HTTP/1.1, or HTTP/2 in cleartext with prior knowledge (h2c).
func transport(version string) *http.Transport {
	protocols := new(http.Protocols)
	if version == "1" {
		protocols.SetHTTP1(true)
	} else {
		protocols.SetUnencryptedHTTP2(true)
	}
	return &http.Transport{Protocols: protocols}
}

func invoke(httpClient *http.Client, url, protocol string, method protoreflect.MethodDescriptor, c call) answer {
	options := []connect.ClientOption{
		connect.WithSchema(method),
		connect.WithResponseInitializer(func(spec connect.Spec, message any) error {
			output := spec.Schema.(protoreflect.MethodDescriptor).Output()
			*(message.(*dynamicpb.Message)) = *dynamicpb.NewMessage(output)
			return nil
		}),
	}
	switch protocol {
	case "grpc":
		options = append(options, connect.WithGRPC())
	case "grpcweb":
		options = append(options, connect.WithGRPCWeb())
	}
	client := connect.NewClient[dynamicpb.Message, dynamicpb.Message](httpClient, url+"/"+service+"/"+string(method.Name()), options...)
	request := dynamicpb.NewMessage(method.Input())
	if err := protojson.Unmarshal(c.Request, request); err != nil {
		fail(fmt.Errorf("%s request: %w", method.Name(), err))
	}
	req := connect.NewRequest(request)
	for name, value := range c.Headers {
		req.Header().Set(name, value)
	}
	res, err := client.CallUnary(context.Background(), req)
	if err != nil {
		var connectErr *connect.Error
		if !errors.As(err, &connectErr) {
			fail(err)
		}
		code := int(connectErr.Code())
		return answer{Code: &code, Message: connectErr.Message()}
	}
	out, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(res.Msg)
	if err != nil {
		fail(err)
	}
	return answer{Response: out}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "connect-go-client:", err)
	os.Exit(1)
}
