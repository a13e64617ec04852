import { ManualClock } from '@floodgate/core/testing';
import { Deadlines } from '../../packages/undici/src/deadlines';

describe('Deadlines', () => {
  it('fires each deadline at its time, with one clock wait per delay', async () => {
    const clock = new ManualClock();
    const deadlines = new Deadlines(clock);
    const fired: string[] = [];
    deadlines.after(100, () => fired.push('a'));
    await clock.advance(30);
    deadlines.after(100, () => fired.push('b'));
    deadlines.after(50, () => fired.push('c'));
    expect(clock.pendingSleeps).toBe(2);
    await clock.advance(69);
    expect(fired).toEqual(['c']);
    await clock.advance(1);
    expect(fired).toEqual(['c', 'a']);
    await clock.advance(30);
    expect(fired).toEqual(['c', 'a', 'b']);
    expect(clock.pendingSleeps).toBe(0);
  });

  it('never fires a cancelled deadline, and stops waiting once every deadline is cancelled or fired', async () => {
    const clock = new ManualClock();
    const deadlines = new Deadlines(clock);
    const fired: number[] = [];
    const all = Array.from({ length: 1000 }, (_, i) => deadlines.after(100, () => fired.push(i)));
    for (const deadline of all.slice(0, 999)) deadline.cancel();
    await clock.advance(100);
    expect(fired).toEqual([999]);
    expect(clock.pendingSleeps).toBe(0);
  });
});
