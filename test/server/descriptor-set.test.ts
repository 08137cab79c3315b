/**
 * The descriptor sets the index refuses, encoded here with protobufjs's descriptor types (no
 * compiler run), the built set loaded, and the services a set declares.
 * test/reflection/descriptors.test.ts holds the index itself (symbols, extensions, imports)
 * on fixture protos compiled with buf.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import type { JwtGrpcError } from '../../src/base/errors.js';
import { declaredServices, indexDescriptorSet, loadDescriptorSet, readDescriptorSet } from '../../src/documents/descriptor-set.js';

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

describe('indexDescriptorSet', () => {
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
      expect(() => indexDescriptorSet(bytes())).toThrow(
        expect.objectContaining({
          code: 'ERR_FILE',
          field: 'descriptorSet',
          message: typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message),
        }),
      );
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
