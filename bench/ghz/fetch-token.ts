import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_FILE } from '../common/paths.js';

interface GenerateJwtClient extends grpc.Client {
  GenerateJwt(
    request: { algorithm: string },
    options: grpc.CallOptions,
    callback: (error: grpc.ServiceError | null, response?: { jwt?: string }) => void,
  ): grpc.ClientUnaryCall;
}

/**
 * Asks the server under test for one token (one GenerateJwt call through grpc-js): the
 * fixed token of its VerifyJwt cell, so each server verifies a token in its own format.
 */
export async function fetchToken(port: number, algorithm: string): Promise<string> {
  const definition = protoLoader.loadSync(PROTO_FILE, { keepCase: true, longs: String, enums: String, defaults: true });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    jwt: { services: { JwtService: new (address: string, credentials: grpc.ChannelCredentials) => GenerateJwtClient } };
  };
  const client = new loaded.jwt.services.JwtService(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  try {
    return await new Promise<string>((resolve, reject) => {
      client.GenerateJwt({ algorithm }, { deadline: Date.now() + 10_000 }, (error, response) => {
        if (error !== null) reject(new Error(`GenerateJwt(${algorithm}) for the VerifyJwt cell failed: ${error.message}`));
        else if (!response?.jwt) reject(new Error(`GenerateJwt(${algorithm}) for the VerifyJwt cell returned no jwt`));
        else resolve(response.jwt);
      });
    });
  } finally {
    client.close();
  }
}
