/**
 * The compiled descriptor set that reflection serves: current with proto/, with protoc's
 * json_name and map entries (byte for byte protoc's where protoc is installed), and its
 * index (symbols, extensions, imports) checked on fixture protos that use what proto/
 * does not (imports, extensions, nesting).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import { captureOutput, runChecked } from '../../bench/kit/exec.js';
import { PACKAGE_ROOT } from '../../src/base/package-root.js';
import { DESCRIPTOR_SET_PATH, type DescriptorIndex, fileWithImports, indexDescriptorSet } from '../../src/documents/descriptor-set.js';

const work = mkdtempSync(join(tmpdir(), 'jwt-grpc-descriptors-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Compiles the .proto files under `dir` (relative to the package) as the build does. */
function compileWithBuf(dir: string): Buffer {
  const buf = createRequire(import.meta.url).resolve('@bufbuild/buf/bin/buf');
  const out = join(work, `${dir.replaceAll('/', '_')}.binpb`);
  runChecked(process.execPath, [buf, 'build', dir, '--as-file-descriptor-set', '--exclude-source-info', '-o', out], { cwd: PACKAGE_ROOT });
  return readFileSync(out);
}

interface Field {
  name: string;
  jsonName?: string;
  label?: string;
  typeName?: string;
}
interface Message {
  name: string;
  field?: Field[];
  nestedType?: Message[];
  options?: { mapEntry?: boolean };
}
interface File {
  name: string;
  messageType?: Message[];
}

function decodeSet(bytes: Buffer): File[] {
  const set = descriptor.FileDescriptorSet.decode(bytes);
  return (descriptor.FileDescriptorSet.toObject(set, { enums: String }) as { file: File[] }).file;
}

/** protoc's json_name: underscores dropped, the letter after each one upper-cased. */
function protocJsonName(name: string): string {
  return name.replace(/_+([a-z0-9])?/g, (_, next: string | undefined) => (next ?? '').toUpperCase());
}

function allMessages(messages: Message[] = []): Message[] {
  return messages.flatMap((message) => [message, ...allMessages(message.nestedType)]);
}

const built = readFileSync(DESCRIPTOR_SET_PATH);

describe('the built descriptor set', () => {
  it('is what buf compiles from proto/ now (run `npm run build` after changing a .proto)', () => {
    expect(built.equals(compileWithBuf('proto'))).toBe(true);
  });

  it('holds every .proto of proto/', () => {
    expect(decodeSet(built).map((file) => file.name)).toEqual([
      'grpc/health/v1/health.proto',
      'grpc/reflection/v1/reflection.proto',
      'grpc/reflection/v1alpha/reflection.proto',
      'jwt.proto',
    ]);
  });

  it("gives every field protoc's json_name", () => {
    const fields = decodeSet(built).flatMap((file) => allMessages(file.messageType).flatMap((message) => message.field ?? []));
    expect(fields.length).toBeGreaterThan(40);
    for (const field of fields) expect(field.jsonName, field.name).toBe(protocJsonName(field.name));
    const jwks = fields.find((field) => field.name === 'jwks_json');
    expect(jwks?.jsonName).toBe('jwksJson');
  });

  it("compiles map<string, HealthCheckResponse> into protoc's StatusesEntry", () => {
    const health = decodeSet(built).find((file) => file.name === 'grpc/health/v1/health.proto');
    const list = health?.messageType?.find((message) => message.name === 'HealthListResponse');
    expect(list?.field).toEqual([
      expect.objectContaining({
        name: 'statuses',
        label: 'LABEL_REPEATED',
        typeName: '.grpc.health.v1.HealthListResponse.StatusesEntry',
        jsonName: 'statuses',
      }),
    ]);
    expect(list?.nestedType).toEqual([
      {
        name: 'StatusesEntry',
        field: [
          expect.objectContaining({ name: 'key', jsonName: 'key' }),
          expect.objectContaining({ name: 'value', typeName: '.grpc.health.v1.HealthCheckResponse', jsonName: 'value' }),
        ],
        options: { mapEntry: true },
      },
    ]);
  });

  const protoc = captureOutput('protoc', ['--version']) !== null;
  it.skipIf(!protoc)('is byte for byte what protoc --include_imports --descriptor_set_out writes (where protoc is installed)', () => {
    const out = join(work, 'protoc.binpb');
    const files = decodeSet(built).map((file) => file.name);
    runChecked('protoc', ['-Iproto', '--include_imports', `--descriptor_set_out=${out}`, ...files], { cwd: PACKAGE_ROOT });
    const fromProtoc = indexDescriptorSet(readFileSync(out)).files;
    for (const [name, file] of indexDescriptorSet(built).files)
      expect(file.bytes.equals(fromProtoc.get(name)?.bytes ?? Buffer.alloc(0)), name).toBe(true);
  });
});

describe('the descriptor index', () => {
  const set = compileWithBuf('test/reflection/fixtures');
  const index: DescriptorIndex = indexDescriptorSet(set);
  const names = (files: Buffer[]): string[] => files.map((bytes) => (descriptor.FileDescriptorProto.decode(bytes) as unknown as File).name);

  it('finds the file of every kind of symbol, enum values beside their enum', () => {
    const expected: Record<string, string> = {
      'fx.Base': 'base.proto',
      'fx.Base.id': 'base.proto',
      'fx.Color': 'base.proto',
      'fx.RED': 'base.proto',
      'fx.mid.Outer': 'middle.proto',
      'fx.mid.Outer.Inner': 'middle.proto',
      'fx.mid.Outer.Inner.Kind': 'middle.proto',
      'fx.mid.Outer.Inner.KIND_A': 'middle.proto',
      'fx.mid.Outer.choice': 'middle.proto',
      'fx.mid.Outer.text': 'middle.proto',
      'fx.mid.Outer.level': 'middle.proto',
      'fx.mid.note': 'middle.proto',
      'fx.top.Api': 'top.proto',
      'fx.top.Api.Call': 'top.proto',
    };
    for (const [symbol, file] of Object.entries(expected)) expect(index.symbols.get(symbol)?.name, symbol).toBe(file);
    expect(index.symbols.has('fx.Color.RED')).toBe(false);
    expect([...index.services]).toEqual(['fx.top.Api']);
    expect([...index.messages].sort()).toEqual(['fx.Base', 'fx.mid.Outer', 'fx.mid.Outer.Inner']);
    expect(index.files.get('top.proto')?.dependencies).toEqual(['base.proto', 'middle.proto']);
  });

  it('finds extensions by extended type and number', () => {
    const extensions = index.extensions.get('fx.Base');
    expect([...(extensions?.keys() ?? [])].sort()).toEqual([100, 150]);
    expect(extensions?.get(150)?.name).toBe('middle.proto');
  });

  it('answers a file with its imports breadth first, each once, less those sent before', () => {
    const file = (name: string) => index.files.get(name) ?? expect.fail(`no ${name}`);
    const sent = new Set<string>();
    expect(names(fileWithImports(index, file('top.proto'), sent))).toEqual(['top.proto', 'base.proto', 'middle.proto']);
    expect(names(fileWithImports(index, file('middle.proto'), sent))).toEqual(['middle.proto']);
    expect(names(fileWithImports(index, file('middle.proto'), new Set()))).toEqual(['middle.proto', 'base.proto']);
    // The bytes are the compiled ones, not a re-encoding.
    expect(fileWithImports(index, file('base.proto'), new Set())[0]).toBe(file('base.proto').bytes);
  });
});
