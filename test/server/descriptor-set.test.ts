/**
 * The descriptor index reflection answers from, on sets encoded here with protobufjs's
 * descriptor types (no compiler run): every symbol to its file, services, messages and
 * extensions, a file with its imports each once, and the malformed sets refused. The built
 * set and buf's output are compared in test/reflection/descriptors.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import type { JwtGrpcError } from '../../src/base/errors.js';
import {
  declaredServices,
  fileWithImports,
  indexDescriptorSet,
  loadDescriptorSet,
  readDescriptorSet,
} from '../../src/documents/descriptor-set.js';

const dir = mkdtempSync(join(tmpdir(), 'jwt-grpc-descriptor-set-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STRING = 9;
const OPTIONAL = 1;

const BASE = {
  name: 'base.proto',
  package: 'fx',
  messageType: [
    { name: 'Base', field: [{ name: 'id', number: 1, type: STRING, label: OPTIONAL }], extensionRange: [{ start: 100, end: 200 }] },
  ],
  enumType: [{ name: 'Color', value: [{ name: 'RED', number: 0 }] }],
};
const MIDDLE = {
  name: 'middle.proto',
  package: 'fx.mid',
  dependency: ['base.proto'],
  messageType: [{ name: 'Outer', nestedType: [{ name: 'Inner', field: [{ name: 'text', number: 1, type: STRING, label: OPTIONAL }] }] }],
  extension: [{ name: 'note', number: 150, type: STRING, label: OPTIONAL, extendee: '.fx.Base' }],
};
const TOP = {
  name: 'top.proto',
  package: 'fx.top',
  dependency: ['base.proto', 'middle.proto'],
  service: [{ name: 'Api', method: [{ name: 'Call', inputType: '.fx.Base', outputType: '.fx.mid.Outer' }] }],
};

function encodeSet(...files: object[]): Buffer {
  return Buffer.from(descriptor.FileDescriptorSet.encode(descriptor.FileDescriptorSet.fromObject({ file: files })).finish());
}

function names(files: Buffer[]): string[] {
  return files.map((bytes) => (descriptor.FileDescriptorProto.decode(bytes) as unknown as { name: string }).name);
}

describe('indexDescriptorSet', () => {
  const index = indexDescriptorSet(encodeSet(BASE, MIDDLE, TOP));

  it('maps every symbol to its file, enum values beside their enum', () => {
    const expected: Record<string, string> = {
      'fx.Base': 'base.proto',
      'fx.Base.id': 'base.proto',
      'fx.Color': 'base.proto',
      'fx.RED': 'base.proto',
      'fx.mid.Outer': 'middle.proto',
      'fx.mid.Outer.Inner': 'middle.proto',
      'fx.mid.Outer.Inner.text': 'middle.proto',
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

  it('finds an extension by extended type and number', () => {
    expect([...(index.extensions.get('fx.Base')?.keys() ?? [])]).toEqual([150]);
    expect(index.extensions.get('fx.Base')?.get(150)?.name).toBe('middle.proto');
  });

  it('answers a file with its imports breadth first, each once, less those sent before, as compiled bytes', () => {
    const file = (name: string) => index.files.get(name) ?? expect.fail(`no ${name}`);
    const sent = new Set<string>();
    expect(names(fileWithImports(index, file('top.proto'), sent))).toEqual(['top.proto', 'base.proto', 'middle.proto']);
    expect(names(fileWithImports(index, file('middle.proto'), sent))).toEqual(['middle.proto']);
    expect(names(fileWithImports(index, file('middle.proto'), new Set()))).toEqual(['middle.proto', 'base.proto']);
    expect(fileWithImports(index, file('base.proto'), new Set())[0]).toBe(file('base.proto').bytes);
  });

  const refused: [string, () => Buffer, RegExp | string][] = [
    [
      'a set that lacks an import',
      () => encodeSet(BASE, TOP),
      'top.proto imports middle.proto, which the set lacks (compile with imports)',
    ],
    ['a file twice', () => encodeSet(BASE, BASE), 'file base.proto appears twice'],
    ['a symbol declared twice', () => encodeSet(BASE, { ...BASE, name: 'copy.proto' }), 'symbol fx.Base is declared twice'],
    ['a file without a name', () => encodeSet({ package: 'x' }), /no name/],
    ['a truncated field', () => Buffer.from([0x0a, 0x05, 0x01]), 'truncated length-delimited field'],
    ['a truncated varint', () => Buffer.from([0x0a, 0x80]), 'truncated varint'],
    ['field number 0', () => Buffer.from([0x02, 0x00]), 'field number 0'],
    ['a file of the wrong wire type', () => Buffer.from([0x08, 0x01]), /has wire type 0, expected 2/],
  ];
  for (const [what, bytes, message] of refused) {
    it(`refuses ${what}`, () => {
      expect(() => indexDescriptorSet(bytes())).toThrow(message);
    });
  }

  it('indexes an empty set as empty', () => {
    const empty = indexDescriptorSet(Buffer.alloc(0));
    expect([empty.files.size, empty.symbols.size, empty.services.size]).toEqual([0, 0, 0]);
  });
});

describe('loadDescriptorSet', () => {
  it("indexes the built set: the package's services", () => {
    expect([...loadDescriptorSet().services].sort()).toEqual([
      'grpc.health.v1.Health',
      'grpc.reflection.v1.ServerReflection',
      'grpc.reflection.v1alpha.ServerReflection',
      'jwt.services.JwtService',
    ]);
  });

  it('refuses a missing file with ERR_FILE saying to build the package', () => {
    const path = join(dir, 'missing.binpb');
    const err = (() => {
      try {
        loadDescriptorSet(path);
      } catch (e) {
        return e as JwtGrpcError;
      }
      throw new Error('not refused');
    })();
    expect([err.code, err.field, err.message]).toEqual([
      'ERR_FILE',
      'descriptorSet',
      `cannot read the compiled descriptor set ${path}: build the package (npm run build)`,
    ]);
  });

  it('refuses a file that is not a descriptor set with ERR_FILE naming it and why', () => {
    const path = join(dir, 'garbage.binpb');
    writeFileSync(path, Buffer.from([0x0a, 0x05, 0x01]));
    expect(() => loadDescriptorSet(path)).toThrow(
      expect.objectContaining({ code: 'ERR_FILE', message: `${path} is not a FileDescriptorSet: truncated length-delimited field` }),
    );
  });
});

describe('declaredServices', () => {
  it('names the same services as the whole index, for the built set and one with a nested package', () => {
    expect(declaredServices(readDescriptorSet())).toEqual(loadDescriptorSet().services);
    const set = encodeSet(BASE, MIDDLE, TOP, { name: 'more.proto', package: 'fx.more', service: [{ name: 'A' }, { name: 'B' }] });
    expect(declaredServices(set)).toEqual(indexDescriptorSet(set).services);
    expect([...declaredServices(set)].sort()).toEqual(['fx.more.A', 'fx.more.B', 'fx.top.Api']);
  });

  it('refuses bytes that are not a descriptor set with ERR_FILE and why', () => {
    expect(() => declaredServices(Buffer.from([0x0a, 0x05, 0x01]))).toThrow(
      expect.objectContaining({
        code: 'ERR_FILE',
        message: 'the descriptor set is not a FileDescriptorSet: truncated length-delimited field',
      }),
    );
    expect(() => declaredServices(encodeSet({ name: 'x.proto', service: [{ method: [] }] }))).toThrow(/a descriptor has no name/);
  });
});
