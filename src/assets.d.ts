declare module "*.png" {
  const path: string;
  export default path;
}

declare module "*.so.8.18.7" {
  const path: string;
  export default path;
}
