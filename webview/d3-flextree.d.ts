// Types for the part of d3-flextree the view uses; the package ships none.
declare module 'd3-flextree' {
  import type { HierarchyNode } from 'd3-hierarchy';

  export interface FlexHierarchyNode<T> extends HierarchyNode<T> {
    x: number;
    y: number;
    xSize: number;
    ySize: number;
    readonly children?: FlexHierarchyNode<T>[];
    readonly parent: FlexHierarchyNode<T> | null;
    descendants(): FlexHierarchyNode<T>[];
    extents: { top: number; bottom: number; left: number; right: number };
  }

  export interface FlexTreeLayout<T> {
    (root: FlexHierarchyNode<T>): FlexHierarchyNode<T>;
    hierarchy(data: T, children?: (d: T) => T[] | null | undefined): FlexHierarchyNode<T>;
    nodeSize(size: (node: FlexHierarchyNode<T>) => [number, number]): FlexTreeLayout<T>;
    spacing(spacing: number | ((a: FlexHierarchyNode<T>, b: FlexHierarchyNode<T>) => number)): FlexTreeLayout<T>;
  }

  export function flextree<T>(options?: {
    children?: (d: T) => T[] | null | undefined;
    nodeSize?: (node: FlexHierarchyNode<T>) => [number, number];
    spacing?: number | ((a: FlexHierarchyNode<T>, b: FlexHierarchyNode<T>) => number);
  }): FlexTreeLayout<T>;
}
