/**
 * The client message numbers one channel's messages have used so far, by
 * sender: a map keyed by the number itself (no joined key string per
 * message), with a short chain when several senders used one number.
 */
export class ClientMsgNos {
  private readonly first = new Map<string, number>();
  private readonly uid: string[] = [];
  private readonly seq: number[] = [];
  /** Index of the next entry with the same number, or -1. */
  private readonly next: number[] = [];

  /** The seq of the message of `uid` that already used `clientMsgNo`, or undefined after recording `seq` for it. */
  addOrGet(uid: string, clientMsgNo: string, seq: number): number | undefined {
    const at = this.first.get(clientMsgNo);
    let last = -1;
    for (let i = at ?? -1; i >= 0; i = this.next[i]!) {
      if (this.uid[i] === uid) return this.seq[i];
      last = i;
    }
    const index = this.uid.length;
    this.uid.push(uid);
    this.seq.push(seq);
    this.next.push(-1);
    if (last < 0) this.first.set(clientMsgNo, index);
    else this.next[last] = index;
    return undefined;
  }

  /** Forgets everything (the next channel begins). */
  clear(): void {
    if (this.uid.length === 0) return;
    this.first.clear();
    this.uid.length = 0;
    this.seq.length = 0;
    this.next.length = 0;
  }
}
