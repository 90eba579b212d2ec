/**
 * The labels pinned computers last said, indexed both ways: id -> label, and label -> its id (or its
 * ids when several share it; a Set only then, as most labels are one computer's). KeyPins keeps one
 * so a label lookup counts a pinned computer that is away as still holding its label. Memory only.
 */
const NO_IDS: readonly number[] = [];

export class PinLabels {
  private readonly byId = new Map<number, string>();
  private readonly byLabel = new Map<string, number | Set<number>>();

  /** `computerId` now says `label` (null: none). */
  set(computerId: number, label: string | null): void {
    if (this.byId.get(computerId) === label) return;
    this.forget(computerId);
    if (label === null) return;
    this.byId.set(computerId, label);
    const ids = this.byLabel.get(label);
    if (ids === undefined) this.byLabel.set(label, computerId);
    else if (typeof ids === 'number') this.byLabel.set(label, new Set([ids, computerId]));
    else ids.add(computerId);
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
}
