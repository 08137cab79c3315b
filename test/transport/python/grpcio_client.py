"""A grpcio (gRPC's Python library, on gRPC core) client for the transport tests.

Runs unary calls against grpc.testing.TestService on 127.0.0.1:PORT and prints one JSON
object: for each case, the status code name and details the client saw (and what it
checked). The messages are built with protobuf's runtime from descriptors written here
(the fields of test/transport/fixtures/grpc/testing/messages.proto the cases use), so no
code generation is needed.

Usage: python grpcio_client.py PORT
"""
import json
import sys

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto


def _message(file, name, fields):
    message = file.message_type.add(name=name)
    for number, (field_name, field_type, type_name) in enumerate(fields, start=1):
        if field_name is None:
            continue
        field = message.field.add(name=field_name, number=number, type=field_type, label=F.LABEL_OPTIONAL)
        if type_name:
            field.type_name = type_name


def _classes():
    file = descriptor_pb2.FileDescriptorProto(name="grpcio_client_messages.proto", package="grpc.testing", syntax="proto3")
    _message(file, "BoolValue", [("value", F.TYPE_BOOL, None)])
    _message(file, "Payload", [(None, 0, None), ("body", F.TYPE_BYTES, None)])
    _message(file, "EchoStatus", [("code", F.TYPE_INT32, None), ("message", F.TYPE_STRING, None)])
    _message(file, "SimpleRequest", [
        (None, 0, None),
        ("response_size", F.TYPE_INT32, None),
        ("payload", F.TYPE_MESSAGE, ".grpc.testing.Payload"),
        (None, 0, None),
        (None, 0, None),
        ("response_compressed", F.TYPE_MESSAGE, ".grpc.testing.BoolValue"),
        ("response_status", F.TYPE_MESSAGE, ".grpc.testing.EchoStatus"),
    ])
    _message(file, "SimpleResponse", [("payload", F.TYPE_MESSAGE, ".grpc.testing.Payload")])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    get = lambda name: message_factory.GetMessageClass(pool.FindMessageTypeByName("grpc.testing." + name))
    return get("SimpleRequest"), get("SimpleResponse")


SimpleRequest, SimpleResponse = _classes()


def _outcome(call):
    """Runs `call`; returns its status name and details (OK and '' on success) and the response."""
    try:
        response, rpc = call()
        return {"code": "OK", "details": ""}, response, rpc
    except grpc.RpcError as err:
        return {"code": err.code().name, "details": err.details()}, None, err


def main():
    port = sys.argv[1]
    results = {}
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 4 << 20)]) as channel:
        unary = channel.unary_unary(
            "/grpc.testing.TestService/UnaryCall",
            request_serializer=SimpleRequest.SerializeToString,
            response_deserializer=SimpleResponse.FromString,
        )

        # gzip both ways: the request compressed by grpcio, the response asked for compressed.
        status, response, rpc = _outcome(lambda: unary.with_call(
            SimpleRequest(response_size=3000, payload={"body": b"\x00" * 5000}, response_compressed={"value": True}),
            compression=grpc.Compression.Gzip,
            timeout=10,
        ))
        results["gzip"] = {**status, "response_bytes": len(response.payload.body) if response else None}

        # Metadata: ASCII and -bin echoed by the test service (initial and trailing).
        status, response, rpc = _outcome(lambda: unary.with_call(
            SimpleRequest(response_size=1),
            metadata=(("x-grpc-test-echo-initial", "hello from python"), ("x-grpc-test-echo-trailing-bin", b"\x00\x01\xfe\xff")),
            timeout=10,
        ))
        initial = dict(rpc.initial_metadata()) if status["code"] == "OK" else {}
        trailing = dict(rpc.trailing_metadata()) if status["code"] == "OK" else {}
        results["metadata"] = {
            **status,
            "initial": initial.get("x-grpc-test-echo-initial"),
            "trailing_bin_hex": trailing.get("x-grpc-test-echo-trailing-bin", b"").hex(),
        }

        # A status with unicode and newlines, chosen by the request.
        message = "\t\nfrom python: ☺ 😈\r\n"
        status, _, _ = _outcome(lambda: unary.with_call(SimpleRequest(response_status={"code": 9, "message": message}), timeout=10))
        results["status"] = {**status, "round_trip": status["details"] == message}

        # A deadline the server cannot meet: a stream whose first response comes after 2 s.
        slow = channel.unary_stream("/grpc.testing.TestService/StreamingOutputCall", request_serializer=lambda raw: raw, response_deserializer=lambda raw: raw)
        # StreamingOutputCallRequest { response_parameters = [{ size: 1, interval_us: 2000000 }] }, encoded by hand.
        parameters = b"\x08\x01\x10\x80\x89\x7a"
        request = b"\x12" + bytes([len(parameters)]) + parameters
        try:
            list(slow(request, timeout=0.3))
            results["deadline"] = {"code": "OK", "details": ""}
        except grpc.RpcError as err:
            results["deadline"] = {"code": err.code().name, "details": err.details()}

        # An unknown method.
        nothing = channel.unary_unary("/grpc.testing.TestService/NoSuchMethod", request_serializer=lambda raw: raw, response_deserializer=lambda raw: raw)
        status, _, _ = _outcome(lambda: nothing.with_call(b"", timeout=10))
        results["unknown_method"] = status

        # Bytes that are not a SimpleRequest (field 3 claims 100 bytes, 1 follows).
        raw = channel.unary_unary("/grpc.testing.TestService/UnaryCall", request_serializer=lambda raw: raw, response_deserializer=lambda raw: raw)
        status, _, _ = _outcome(lambda: raw.with_call(b"\x1a\x64\x00", timeout=10))
        results["malformed"] = status

        # A request over the server's 64 KiB limit.
        status, _, _ = _outcome(lambda: unary.with_call(SimpleRequest(payload={"body": b"\x00" * 100_000}), timeout=10))
        results["oversized"] = status

        # The connection is still good.
        status, response, _ = _outcome(lambda: unary.with_call(SimpleRequest(response_size=7), timeout=10))
        results["after"] = {**status, "response_bytes": len(response.payload.body) if response else None}
    print(json.dumps(results))


if __name__ == "__main__":
    main()
