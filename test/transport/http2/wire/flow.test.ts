/**
 * Flow-control windows (RFC 9113 §5.2, §6.9): what each side may send, the peer sending past
 * its window refused, the 2^31 - 1 bound, and the WINDOW_UPDATE increment to return.
 */
import { describe, expect, it } from 'vitest';
import { FlowWindows } from '../../../../src/transport/http2/wire/flow.js';
import { DEFAULT_WINDOW_SIZE, MAX_WINDOW_SIZE } from '../../../../src/transport/http2/wire/frames.js';

describe('FlowWindows', () => {
  it('takes what this side sends from the send window and adds WINDOW_UPDATEs to it', () => {
    const flow = new FlowWindows(DEFAULT_WINDOW_SIZE, DEFAULT_WINDOW_SIZE);
    flow.takeSend(1000);
    expect(flow.sendWindow).toBe(DEFAULT_WINDOW_SIZE - 1000);
    expect(flow.addSend(1000)).toBe(true);
    expect(flow.sendWindow).toBe(DEFAULT_WINDOW_SIZE);
  });

  it('lets a negative SETTINGS_INITIAL_WINDOW_SIZE change take the window below zero (§6.9.2)', () => {
    const flow = new FlowWindows(100, DEFAULT_WINDOW_SIZE);
    expect(flow.addSend(-300)).toBe(true);
    expect(flow.sendWindow).toBe(-200);
  });

  it('says false when a WINDOW_UPDATE would take the window past 2^31 - 1, and true at the bound', () => {
    const flow = new FlowWindows(MAX_WINDOW_SIZE - 10, DEFAULT_WINDOW_SIZE);
    expect(flow.addSend(10)).toBe(true);
    expect(flow.sendWindow).toBe(MAX_WINDOW_SIZE);
    expect(flow.addSend(1)).toBe(false);
  });

  it('takes received bytes from the receive window up to the last byte of it', () => {
    const flow = new FlowWindows(DEFAULT_WINDOW_SIZE, 100);
    expect(flow.takeReceive(60)).toBe(true);
    expect(flow.takeReceive(40)).toBe(true);
    expect(flow.receiveWindow).toBe(0);
    expect(flow.unacknowledged).toBe(100);
  });

  it('refuses bytes the peer sent beyond its window and takes nothing then', () => {
    const flow = new FlowWindows(DEFAULT_WINDOW_SIZE, 100);
    expect(flow.takeReceive(101)).toBe(false);
    expect(flow.receiveWindow).toBe(100);
    expect(flow.unacknowledged).toBe(0);
  });

  it('returns what was received as the WINDOW_UPDATE increment, once', () => {
    const flow = new FlowWindows(DEFAULT_WINDOW_SIZE, 100);
    flow.takeReceive(30);
    flow.takeReceive(20);
    expect(flow.acknowledge()).toBe(50);
    expect(flow.receiveWindow).toBe(100);
    expect(flow.unacknowledged).toBe(0);
    expect(flow.acknowledge()).toBe(0);
  });
});
