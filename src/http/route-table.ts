/**
 * Fastify answers 404 for a known path with an unknown method; the contract wants 405 with an
 * `Allow` header. Every registered route is mirrored into this router so the not-found handler can
 * tell "no such path" from "no such method".
 */
import FindMyWay, { type HTTPVersion } from 'find-my-way';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export class RouteTable {
  private readonly router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: true });

  add(method: string | string[], url: string): void {
    for (const m of Array.isArray(method) ? method : [method]) {
      if (m === 'HEAD' || this.router.hasRoute(m as 'GET', url)) continue;
      this.router.on(m as 'GET', url, () => {});
    }
  }

  /** The methods that do match the URL's path (empty when no route has that path). */
  allowedMethods(url: string): string[] {
    const path = url.split('?')[0] ?? url;
    return METHODS.filter((m) => this.router.find(m, path) !== null);
  }
}
