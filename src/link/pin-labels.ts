/**
 * The labels pinned computers last said, indexed both ways: id -> label, and label -> its id (or its
 * ids when several share it; a Set only then, as most labels are one computer's). KeyPins keeps one
 * so a label lookup counts a pinned computer that is away as still holding its label; the pins file
 * keeps them across restarts (`# label <id> <JSON string>` lines, pins-text.ts).
 */
const NO_IDS: readonly number[] = [];

export class PinLabels {
  private readonly byId = new Map<number, string>();
  private readonly byLabel = new Map<string, number | Set<number>>();

  /** `computerId` now says `label` (null: none). Whether that changed what is kept. */
  set(computerId: number, label: string | null): boolean {
    const was = this.byId.get(computerId) ?? null;
    if (was === label) return false;
    this.forget(computerId);
    if (label === null) return true;
    this.byId.set(computerId, label);
    const ids = this.byLabel.get(label);
    if (ids === undefined) this.byLabel.set(label, computerId);
    else if (typeof ids === 'number') this.byLabel.set(label, new Set([ids, computerId]));
    else ids.add(computerId);
    return true;
  }

  forget(computerId: number): void {
    const label = this.byId.get(computerId);
    if (label === undefined) return;
    this.byId.delete(computerId);
    const ids = this.byLabel.get(label)!;
    if (typeof ids === 'number') this.byLabel.delete(label);
    else {
      ids.delete(computerId);
      if (ids.size === 1) this.byLabel.set(label, ids.values().next().value as number);
    }
  }

  idsOf(label: string): Iterable<number> {
    const ids = this.byLabel.get(label);
    return ids === undefined ? NO_IDS : typeof ids === 'number' ? [ids] : ids;
  }

  labelOf(computerId: number): string | null {
    return this.byId.get(computerId) ?? null;
  }

  ids(): number[] {
    return [...this.byId.keys()];
  }

  /** Every label kept, for the pins file: [id, label], ids ascending. */
  entries(): Array<[number, string]> {
    return [...this.byId].sort((a, b) => a[0] - b[0]);
  }
}
