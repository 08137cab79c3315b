/**
 * grpcurl (pinned, from `.tools/`: `npm run tools`) against the server on each transport,
 * through reflection alone: it lists the services served,
 * describes every symbol, and calls every method of JwtService and Health, printing the
 * same JSON as when it is given the .proto files instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_NAME } from '../../src/lib/index.js';
import { type CommandRun, runToExit } from '../../bench/kit/launcher.js';
import { GO_TOOLS, requireGoTool } from '../../bench/kit/tools.js';
import { TRANSPORTS } from '../../bench/kit/jwt-servers.js';
import { type TestServer, closeTestServers, startTestServer } from './server.js';

const HEALTH = 'grpc.health.v1.Health';
const SERVED = [HEALTH, 'grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection', SERVICE_NAME];

/** grpcurl's flags to read each service from its .proto file instead of reflection. */
const FROM_PROTO: Record<string, string[]> = {
  [SERVICE_NAME]: ['-proto', 'proto/jwt.proto'],
  [HEALTH]: ['-import-path', 'proto', '-proto', 'grpc/health/v1/health.proto'],
  v1: ['-import-path', 'proto', '-proto', 'grpc/reflection/v1/reflection.proto'],
  v1alpha: ['-import-path', 'proto', '-proto', 'grpc/reflection/v1alpha/reflection.proto'],
};

/** Every symbol of the served protos that grpcurl can describe, with what it says it is. */
const SYMBOLS: [symbol: string, kind: string][] = [
  ...SERVED.map((service): [string, string] => [service, 'a service']),
  ...['GenerateJwt', 'VerifyJwt', 'GetJwks', 'GetStatusList', 'RevokeJwt', 'ExchangeToken'].map((method): [string, string] => [
    `${SERVICE_NAME}.${method}`,
    'a method',
  ]),
  ...['Check', 'List', 'Watch'].map((method): [string, string] => [`${HEALTH}.${method}`, 'a method']),
  ['grpc.reflection.v1.ServerReflection.ServerReflectionInfo', 'a method'],
  ['grpc.reflection.v1alpha.ServerReflection.ServerReflectionInfo', 'a method'],
  ...messages().map((message): [string, string] => [message, 'a message']),
  ['jwt.services.VerifyJwtResponse.Reason', 'an enum'],
  ['grpc.health.v1.HealthCheckResponse.ServingStatus', 'an enum'],
  ['jwt.services.VerifyJwtResponse.EXPIRED', 'an enum value'],
  ['grpc.health.v1.HealthCheckResponse.SERVICE_UNKNOWN', 'an enum value'],
  ['grpc.health.v1.HealthListResponse.StatusesEntry', 'the entry type for a map field'],
  ['jwt.services.GenerateJwtResponse.expires_at', 'a field'],
  ['grpc.reflection.v1.ServerReflectionResponse.message_response', 'a one-of'],
];

function messages(): string[] {
  const jwt = [
    'GenerateJwtRequest',
    'GenerateJwtResponse',
    'VerifyJwtRequest',
    'VerifyJwtResponse',
    'GetJwksRequest',
    'GetJwksResponse',
    'GetStatusListRequest',
    'GetStatusListResponse',
    'RevokeJwtRequest',
    'RevokeJwtResponse',
    'ExchangeTokenRequest',
    'ExchangeTokenResponse',
  ];
  const health = ['HealthCheckRequest', 'HealthCheckResponse', 'HealthListRequest', 'HealthListResponse'];
  const reflection = [
    'ServerReflectionRequest',
    'ExtensionRequest',
    'ServerReflectionResponse',
    'FileDescriptorResponse',
    'ExtensionNumberResponse',
    'ListServiceResponse',
    'ServiceResponse',
    'ErrorResponse',
  ];
  return [
    ...jwt.map((name) => `jwt.services.${name}`),
    ...health.map((name) => `grpc.health.v1.${name}`),
    ...reflection.flatMap((name) => [`grpc.reflection.v1.${name}`, `grpc.reflection.v1alpha.${name}`]),
  ];
}

/** The proto flags for the file declaring `symbol`. */
function protoFlags(symbol: string): string[] {
  if (symbol.startsWith('jwt.')) return FROM_PROTO[SERVICE_NAME] ?? [];
  if (symbol.startsWith('grpc.health.')) return FROM_PROTO[HEALTH] ?? [];
  return FROM_PROTO[symbol.startsWith('grpc.reflection.v1alpha.') ? 'v1alpha' : 'v1'] ?? [];
}

let binary: string;

/** grpcurl in plaintext against `address`; `flags` come before the address, `rest` after it. */
function run(address: string, flags: readonly string[], ...rest: string[]): Promise<CommandRun> {
  return runToExit(binary, ['-plaintext', ...flags, address, ...rest], { timeoutMs: 20_000 });
}

function expectOk(result: CommandRun): CommandRun {
  expect(result.code, result.stderr).toBe(0);
  return result;
}

beforeAll(() => {
  binary = requireGoTool(GO_TOOLS.grpcurl);
});

afterAll(async () => {
  await closeTestServers();
});

describe.each(TRANSPORTS)('on transport %s', (transport) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ transport });
  });

  describe('list', () => {
    it('shows exactly the services served', async () => {
      const { stdout } = expectOk(await run(server.address, [], 'list'));
      expect(stdout.trim().split('\n')).toEqual(SERVED);
    });

    it('shows the methods of each service', async () => {
      expect(
        expectOk(await run(server.address, [], 'list', SERVICE_NAME))
          .stdout.trim()
          .split('\n'),
      ).toEqual(
        ['ExchangeToken', 'GenerateJwt', 'GetJwks', 'GetStatusList', 'RevokeJwt', 'VerifyJwt'].map((method) => `${SERVICE_NAME}.${method}`),
      );
      expect(
        expectOk(await run(server.address, [], 'list', HEALTH))
          .stdout.trim()
          .split('\n'),
      ).toEqual(['Check', 'List', 'Watch'].map((method) => `${HEALTH}.${method}`));
    });

    it('does not show Health when it is not served', async () => {
      const bare = await startTestServer({ transport, health: false });
      const { stdout } = expectOk(await run(bare.address, [], 'list'));
      expect(stdout.trim().split('\n')).toEqual(SERVED.filter((name) => name !== HEALTH));
    });
  });

  describe('describe', () => {
    it.each(SYMBOLS)('describes %s as %s', async (symbol, kind) => {
      const { stdout } = expectOk(await run(server.address, [], 'describe', symbol));
      const header = stdout.split('\n')[0] ?? '';
      expect(header.endsWith(` is ${kind}:`), header).toBe(true);
      // An enum value is named inside its enum (grpcurl's way): compare the last part only.
      expect(header.startsWith(symbol) || header.includes(`.${symbol.split('.').pop() ?? ''} `), header).toBe(true);
    });

    it('describes the map field as a map, with protoc map entry', async () => {
      const { stdout } = expectOk(await run(server.address, [], 'describe', 'grpc.health.v1.HealthListResponse'));
      expect(stdout).toContain('map<string, .grpc.health.v1.HealthCheckResponse> statuses = 1;');
    });

    it.each(messages())('gives %s the JSON template (JSON names) it gives from the .proto', async (message) => {
      const template = (result: CommandRun): string => expectOk(result).stdout.split('Message template:')[1] ?? 'no template';
      const fromReflection = template(await run(server.address, ['-msg-template'], 'describe', message));
      const fromProto = template(await run(server.address, ['-msg-template', ...protoFlags(message)], 'describe', message));
      expect(fromReflection).toBe(fromProto);
    });

    it('uses protoc JSON names', async () => {
      const template = (message: string) =>
        run(server.address, ['-msg-template'], 'describe', message).then((result) => expectOk(result).stdout);
      expect(await template('jwt.services.GetJwksResponse')).toContain('"jwksJson"');
      expect(await template('jwt.services.GenerateJwtResponse')).toContain('"expiresAt"');
      expect(await template('jwt.services.GenerateJwtRequest')).toContain('"ttlSeconds"');
    });

    it('fails for an unknown symbol, naming it', async () => {
      const result = await run(server.address, [], 'describe', 'no.such.Symbol');
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('no.such.Symbol');
    });
  });

  describe('calls through reflection print the JSON that the .proto gives', () => {
    /** Calls `method` of `service` both ways; resolves to the reflection result once both agree. */
    async function callBothWays(service: string, method: string, request: string | undefined, extra: string[] = []): Promise<CommandRun> {
      const data = request === undefined ? [] : ['-d', request];
      const viaReflection = await run(server.address, [...extra, ...data], `${service}/${method}`);
      const viaProto = await run(server.address, [...extra, ...data, ...(FROM_PROTO[service] ?? [])], `${service}/${method}`);
      const shape = (result: CommandRun) => ({ exit: result.code, stdout: normalize(result.stdout), status: statusLine(result.stderr) });
      expect(shape(viaReflection)).toEqual(shape(viaProto));
      return viaReflection;
    }

    /**
     * The status code grpcurl reports. Its message may differ between two runs: when
     * -max-time ends a call, the client's own deadline or the server's status wins the race.
     */
    function statusLine(stderr: string): string {
      return /Code: \w+/.exec(stderr)?.[0] ?? stderr;
    }

    /** Tokens and expiry times differ from call to call: keep their shape, not their value. */
    function normalize(stdout: string): string {
      return stdout
        .replace(/"jwt": "[\w-]+\.[\w-]+\.[\w-]+"/g, '"jwt": "<compact JWS>"')
        .replace(/"expiresAt": "\d+"/g, '"expiresAt": "<seconds>"');
    }

    it('JwtService/GenerateJwt', async () => {
      const { stdout } = await callBothWays(SERVICE_NAME, 'GenerateJwt', '{"algorithm": "ES256", "subject": "ada", "ttlSeconds": 60}');
      const response = JSON.parse(stdout) as Record<string, unknown>;
      expect(Object.keys(response)).toEqual(['jwt', 'sub', 'kid', 'expiresAt']);
      expect(response).toMatchObject({ sub: 'ada', expiresAt: expect.stringMatching(/^\d+$/) });
    });

    it('JwtService/VerifyJwt', async () => {
      const made = JSON.parse(
        expectOk(await run(server.address, ['-d', '{"algorithm": "EdDSA", "subject": "bob"}'], `${SERVICE_NAME}/GenerateJwt`)).stdout,
      ) as {
        jwt: string;
      };
      const { stdout } = await callBothWays(SERVICE_NAME, 'VerifyJwt', JSON.stringify({ jwt: made.jwt }));
      expect(JSON.parse(stdout)).toMatchObject({ valid: true, sub: 'bob', claimsJson: expect.stringContaining('"sub":"bob"') });
      const refused = await callBothWays(SERVICE_NAME, 'VerifyJwt', '{"jwt": "not-a-token"}');
      expect(JSON.parse(refused.stdout)).toEqual({ reason: 'MALFORMED' });
    });

    it('JwtService/GetJwks', async () => {
      const { stdout } = await callBothWays(SERVICE_NAME, 'GetJwks', undefined);
      const response = JSON.parse(stdout) as { jwksJson: string };
      expect(Object.keys(response)).toEqual(['jwksJson']);
      expect((JSON.parse(response.jwksJson) as { keys: unknown[] }).keys.length).toBeGreaterThan(0);
    });

    it('Health/Check', async () => {
      expect(JSON.parse((await callBothWays(HEALTH, 'Check', '{"service": ""}')).stdout)).toEqual({ status: 'SERVING' });
      const unknown = await callBothWays(HEALTH, 'Check', '{"service": "no.such.Service"}');
      expect(unknown.stderr).toContain('NotFound');
    });

    it('Health/List', async () => {
      expect(JSON.parse((await callBothWays(HEALTH, 'List', undefined)).stdout)).toEqual({
        statuses: { '': { status: 'SERVING' }, [SERVICE_NAME]: { status: 'SERVING' } },
      });
    });

    it('Health/Watch, until -max-time ends it', async () => {
      const watched = await callBothWays(HEALTH, 'Watch', `{"service": "${SERVICE_NAME}"}`, ['-max-time', '0.5']);
      expect(JSON.parse(watched.stdout)).toEqual({ status: 'SERVING' });
      expect(watched.stderr).toContain('DeadlineExceeded');
    });
  });

  describe('a server with only grpc.reflection.v1alpha', () => {
    it('is described and called through grpcurl falling back to v1alpha', async () => {
      const old = await startTestServer({ transport, onlyV1alpha: true });
      expect(expectOk(await run(old.address, [], 'list')).stdout).toContain(SERVICE_NAME);
      expect(expectOk(await run(old.address, [], 'describe', 'grpc.health.v1.HealthListResponse')).stdout).toContain(
        'map<string, .grpc.health.v1.HealthCheckResponse> statuses = 1;',
      );
      const { stdout } = expectOk(await run(old.address, ['-d', '{"service": ""}'], `${HEALTH}/Check`));
      expect(JSON.parse(stdout)).toEqual({ status: 'SERVING' });
      expect(JSON.parse(expectOk(await run(old.address, [], `${SERVICE_NAME}/GetJwks`)).stdout)).toHaveProperty('jwksJson');
    });
  });
});
